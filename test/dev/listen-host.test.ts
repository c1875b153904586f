import { createStripeSandbox } from "../../src/dev/stripe-sandbox";
import { captureLog } from "../support/log-capture";

/**
 * In a container (docker-compose.yml: HOST=0.0.0.0) the stand-ins listen on every interface, so that
 * a published port reaches their pages; the URL they give (the pay page's, the label links') names
 * loopback, which reaches them from inside the container and, through the published port, from the
 * machine's browser.
 */
describe("a stand-in listening on every interface", () => {
  it("gives a loopback URL that answers", async () => {
    const sandbox = createStripeSandbox({
      webhookSecret: "whsec_listen_host",
      logger: captureLog("silent").logger,
    });
    try {
      const { url } = await sandbox.listen(0, "0.0.0.0");
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${url}/`)).status).toBe(200);
    } finally {
      await sandbox.close();
    }
  });
});
