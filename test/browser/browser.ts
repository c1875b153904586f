import { existsSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { adminToken } from "../e2e/e2e-harness";

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
 * The app's public address, held by the test itself: a server on port 0 that stays open for the
 * whole file and forwards every request to the app once `forwardTo` names it. The app's
 * PUBLIC_URL (links in pages and e-mails) must be known before the app starts; a port that was
 * free a moment ago may be taken by then, one we keep listening on cannot.
 */
export interface PublicEntrance {
  url: string;
  forwardTo(appUrl: string): void;
  close(): Promise<void>;
}

export async function startPublicEntrance(): Promise<PublicEntrance> {
  let target: URL | null = null;
  const server = http.createServer((req, res) => {
    if (!target) {
      res.writeHead(503).end("the app is not started yet");
      return;
    }
    const upstream = http.request(
      // agent: false: no kept-alive socket to the app outlives the file.
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forwardTo: (appUrl) => {
      target = new URL(appUrl);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
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

/** A fresh browser context logged in to the ops console with the admin token, on its start page. */
export async function logInToConsole(browser: Browser, publicUrl: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${publicUrl}/ops/login`);
  await page.fill('input[name="token"]', adminToken);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.waitForURL(`${publicUrl}/ops`);
  return page;
}
