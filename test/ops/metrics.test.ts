import request from "supertest";
import { buildApp } from "../../src/app";
import { createLogger } from "../../src/logger";
import { createMetrics, metricsRoute } from "../../src/metrics";
import { WorkflowHarness } from "../support/workflow-harness";
import { runDeclinedOrder, runFullOrder } from "./full-order";

jest.setTimeout(60_000);

/** The value of one series in Prometheus' text format, or undefined when it is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /metrics after whole orders", () => {
  let h: WorkflowHarness;
  let text: string;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
    await h.addProduct("METRICS-1", 10);
    await runFullOrder(h, "METRICS-1");
    h.smtp.refuseNext(1); // the payment-failed e-mail is refused: queued for the outbox, the run goes on
    await runDeclinedOrder(h, "METRICS-1");
    // The webhook intakes report each delivery through this call.
    h.services.metrics.observeWebhook("checkout.session.completed", "processed", 0.02);

    const res = await request(h.appUrl).get("/metrics").expect(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    text = res.text;
  });
  afterAll(() => h.close());

  it("counts order status transitions", () => {
    expect(sample(text, 'order_status_transitions_total{to="fulfilling"}')).toBe(2);
    expect(sample(text, 'order_status_transitions_total{to="shipped"}')).toBe(1);
    expect(sample(text, 'order_status_transitions_total{to="delivered"}')).toBe(1);
    expect(sample(text, 'order_status_transitions_total{to="completed"}')).toBe(1);
    expect(sample(text, 'order_status_transitions_total{to="payment_failed"}')).toBe(1);
  });

  it("counts and times workflow steps by outcome", () => {
    const step = (name: string, outcome: string) =>
      sample(text, `workflow_steps_total{function="fulfill-order",step="${name}",outcome="${outcome}"}`);
    expect(step("claim", "completed")).toBe(2);
    expect(step("charge-card", "completed")).toBe(1);
    expect(step("charge-card", "failed")).toBe(1);
    // An SMTP failure does not fail the step: the e-mail waits in the outbox.
    expect(step("send-payment-failed", "retrying")).toBeUndefined();
    expect(step("send-payment-failed", "completed")).toBe(1);
    expect(
      sample(
        text,
        'workflow_step_duration_seconds_count{function="fulfill-order",step="send-payment-failed"}',
      ),
    ).toBe(1);
    expect(text).toContain(
      'workflow_step_duration_seconds_bucket{le="0.01",function="fulfill-order",step="claim"}',
    );
  });

  it("counts e-mails and alerts by outcome", () => {
    expect(sample(text, 'emails_total{template="shipped",outcome="sent"}')).toBe(1);
    expect(sample(text, 'emails_total{template="reviewRequest",outcome="sent"}')).toBe(1);
    expect(sample(text, 'emails_total{template="paymentFailed",outcome="queued"}')).toBe(1);
    expect(sample(text, 'alerts_total{kind="run-failed",outcome="sent"}')).toBe(1);
  });

  it("exposes webhook counts and latency", () => {
    expect(
      sample(text, 'webhooks_received_total{type="checkout.session.completed",outcome="processed"}'),
    ).toBe(1);
    expect(sample(text, 'webhook_duration_seconds_count{type="checkout.session.completed"}')).toBe(1);
  });

  it("includes Node's default process metrics", () => {
    expect(text).toContain("# TYPE process_cpu_user_seconds_total counter");
    expect(text).toContain("# TYPE nodejs_heap_size_used_bytes gauge");
  });
});

describe("GET /metrics with METRICS_TOKEN", () => {
  const token = "metrics-token-0123456789";
  const app = buildApp({
    logger: createLogger({ level: "silent" }),
    readiness: async () => ({ ready: true, checks: {} }),
    metricsRoute: metricsRoute(createMetrics({ defaultMetrics: false }), { token }),
  });

  it("answers a scraper with the token and refuses one without", async () => {
    await request(app).get("/metrics").expect(401);
    await request(app).get("/metrics").set("Authorization", "Bearer not-the-token").expect(401);
    const res = await request(app).get("/metrics").set("Authorization", `Bearer ${token}`).expect(200);
    expect(res.text).toContain("# TYPE emails_total counter");
  });
});
