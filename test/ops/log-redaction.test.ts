import request from "supertest";
import { createAlerter } from "../../src/alerts";
import { parseConfig } from "../../src/config";
import { captureLog } from "../support/log-capture";
import { adminToken, easyPostSecret, webhookSecret, WorkflowHarness } from "../support/workflow-harness";
import { runDeclinedOrder, runFullOrder } from "./full-order";

jest.setTimeout(60_000);

const customerEmail = "buyer@example.com";
const smtpPassword = "smtp-pass-5f1c9e2a77";

describe("the service's logs across whole orders", () => {
  const log = captureLog("trace");
  let h: WorkflowHarness;
  let fulfilled: { orderId: string; runId: string };

  beforeAll(async () => {
    h = await WorkflowHarness.start({
      serviceLogger: log.logger,
      smtpCredentials: { user: "mailer", pass: smtpPassword },
    });
    await h.addProduct("LOG-1", 10);

    fulfilled = await runFullOrder(h);
    // The failure paths log the most: an e-mail the server refuses once, a declined capture, and
    // the Slack alert about it failing to deliver.
    h.smtp.refuseNext(1);
    h.slack.answerWith(500);
    await runDeclinedOrder(h, "LOG-1");
    // Wrong credentials on every authenticated route.
    await request(h.appUrl)
      .get(`/api/orders/${fulfilled.orderId}`)
      .set("Authorization", "Bearer wrong")
      .expect(401);
    await request(h.appUrl)
      .post("/api/carrier/webhook")
      .set("Content-Type", "application/json")
      .set("X-Hmac-Signature", `hmac-sha256-hex=${"0".repeat(64)}`)
      .send("{}")
      .expect(400);
  });
  afterAll(() => h.close());

  it("captured a real log: every line of a step carries its order id and run id", () => {
    const lines = log.lines();
    expect(lines.length).toBeGreaterThan(20);
    const emailSent = lines.find((line) => line.msg === "e-mail sent" && line.orderId === fulfilled.orderId);
    expect(emailSent).toMatchObject({ orderId: fulfilled.orderId, runId: fulfilled.runId });
    expect(lines.some((line) => line.msg === "e-mail could not be sent")).toBe(true);
    expect(lines.some((line) => line.msg === "alert could not be delivered to Slack; kept and retried")).toBe(
      true,
    );
    expect(lines.some((line) => line.msg === "workflow step failed for good")).toBe(true);
    // The SDK's own lines run inside the request's log context too.
    const sdkStepError = lines.find((line) => line.msg === "Inngest step error");
    expect(sdkStepError).toMatchObject({ orderId: expect.any(String), runId: expect.any(String) });
  });

  it("never contain a Slack webhook URL that could not be reached", async () => {
    const unreachable = captureLog("trace");
    const webhookUrl = "http://127.0.0.1:9/services/T111/B111/unreachable-secret";
    const { alerter } = createAlerter(parseConfig({ SLACK_WEBHOOK_URL: webhookUrl }), unreachable.logger, {
      db: h.db,
      groupWindowMs: 0,
      runUrlTemplate: "http://inngest.test/run/{runId}",
    });
    // A kind of its own: the declined order's alert (Slack answered 500) holds its kind in backoff.
    await alerter.runFailed({
      functionId: "shop-unreachable-slack",
      runId: "run-1",
      error: { name: "E", message: "m" },
    });

    expect(unreachable.lines()).toEqual([
      expect.objectContaining({ msg: "alert could not be delivered to Slack; kept and retried" }),
    ]);
    expect(unreachable.text()).not.toContain("unreachable-secret");
  });

  it("mask e-mail addresses quoted in error messages", () => {
    const quoted = captureLog("info");
    const refused = Object.assign(new Error(`550 5.1.1 <${customerEmail}>: Recipient address rejected`), {
      rejected: [customerEmail],
    });
    quoted.logger.error({ err: new Error("send failed", { cause: refused }) }, "e-mail could not be sent");

    expect(quoted.text()).toContain("Recipient address rejected");
    expect(quoted.text()).not.toContain(customerEmail);
  });

  it.each([
    ["the admin token", adminToken],
    ["the EasyPost webhook secret", easyPostSecret],
    ["the Stripe webhook secret", webhookSecret],
    ["the SMTP password", smtpPassword],
    ["the Slack webhook URL", "/services/T000/B000/secret"],
    ["the customer's e-mail address", customerEmail],
  ])("never contain %s", (_what, secret) => {
    expect(log.text()).not.toContain(secret);
  });
});
