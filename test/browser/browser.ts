import { existsSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it when missing). */
export const chromiumPath = "/usr/bin/chromium";

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(`${chromiumPath} is missing: run "apt-get install -y chromium" (as .ci/run does)`);
  }
  // Root in a container has no user namespace for Chromium's sandbox.
  return chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox"] });
}

/**
 * A port the OS says is free now: the app's PUBLIC_URL (links in pages and e-mails) must name
 * its port before it starts, so port 0 cannot be used for it.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Where the tests save their screenshots: a temporary folder, so `npm test` leaves the checkout
 * clean; `npm run docs:screenshots` points it at docs/screenshots to refresh the README's pictures.
 */
export const screenshotDir =
  // eslint-disable-next-line no-restricted-properties -- a test-only switch, not service configuration
  process.env.SCREENSHOT_DIR !== undefined
    ? // eslint-disable-next-line no-restricted-properties -- see above
      path.resolve(process.env.SCREENSHOT_DIR)
    : path.join(os.tmpdir(), "order-fulfillment-screenshots");
