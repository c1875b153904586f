import request from "supertest";
import { runDeclinedOrder } from "../ops/full-order";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(120_000);

/**
 * The ops alert of a failed order, end to end through the service as wired: the run fails, its
 * failure handler raises the alert, Slack (the stand-in, driven by @slack/webhook) answers.
 */
describe("an ops alert about a failed order", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
    await h.addProduct("ALERT-1", 50);
  });
  afterAll(() => h.close());
  afterEach(() => h.slack.answerWith(200));

  const mentioning = (bodies: unknown[], orderId: string) =>
    bodies.filter((body) => JSON.stringify(body).includes(orderId));
  /** The outbox's backoff runs on the wall clock, which the harness does not move: make the retry due. */
  const retriesDue = () =>
    h.db.$executeRawUnsafe(`UPDATE ops_alerts SET next_attempt_at = now() - interval '1 second'`);
  /** The alert's own run (deliver-alert-group) retries on the next settle. */
  const nextDelivery = async () => {
    await retriesDue();
    await h.settle(2);
  };

  it("arrives exactly once when Slack answers 500 twice, then 200", async () => {
    h.slack.answerNext([500, 500]);
    const { orderId } = await runDeclinedOrder(h, "ALERT-1");
    for (let i = 0; i < 4; i++) await nextDelivery();

    expect(mentioning(h.slack.bodies, orderId)).toHaveLength(3);
    expect(mentioning(h.slack.accepted, orderId)).toHaveLength(1);
    expect(JSON.stringify(mentioning(h.slack.accepted, orderId)[0])).toContain("NonRetriableError");
  });

  it("still arrives when Slack is down across a restart", async () => {
    h.slack.answerWith(503);
    const { orderId } = await runDeclinedOrder(h, "ALERT-1");
    await nextDelivery();
    expect(mentioning(h.slack.bodies, orderId).length).toBeGreaterThanOrEqual(2);
    expect(mentioning(h.slack.accepted, orderId)).toHaveLength(0);

    await h.restartService({});
    h.slack.answerWith(200);
    for (let i = 0; i < 2; i++) await nextDelivery();

    expect(mentioning(h.slack.accepted, orderId)).toHaveLength(1);
  });

  it("undelivered for long: /readyz stays up, the console shows a banner, the metric counts it", async () => {
    h.slack.answerWith(500);
    const { orderId } = await runDeclinedOrder(h, "ALERT-1");
    // Failing for an hour (ALERT_BANNER_AFTER is 10 minutes by default).
    await h.db.$executeRawUnsafe(`UPDATE ops_alerts SET created_at = now() - interval '1 hour'`);
    await nextDelivery();
    expect(mentioning(h.slack.accepted, orderId)).toHaveLength(0);

    await request(h.appUrl).get("/readyz").expect(200);
    const metrics = await request(h.appUrl).get("/metrics").expect(200);
    expect(metrics.text).toMatch(/^alerts_undelivered 1$/m);
    const login = await request(h.appUrl)
      .post("/ops/login")
      .type("form")
      .send({ token: adminToken })
      .expect(303);
    const cookie = String(login.headers["set-cookie"]).split(";")[0] as string;
    const page = await request(h.appUrl).get("/ops").set("Cookie", cookie).expect(200);
    expect(page.text).toContain("1 ops alert could not be delivered to Slack since");

    h.slack.answerWith(200);
    await nextDelivery();
    expect(mentioning(h.slack.accepted, orderId)).toHaveLength(1);
    expect((await request(h.appUrl).get("/metrics").expect(200)).text).toMatch(/^alerts_undelivered 0$/m);
    const after = await request(h.appUrl).get("/ops").set("Cookie", cookie).expect(200);
    expect(after.text).not.toContain("could not be delivered to Slack");
  });
});
