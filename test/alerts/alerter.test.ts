import { IncomingWebhook } from "@slack/webhook";
import { parseConfig } from "../../src/config";
import {
  createAlertOutbox,
  createAlerter,
  createDurableAlerter,
  createLogAlerter,
  type RunFailure,
} from "../../src/alerts";
import { createLogger, type Logger } from "../../src/logger";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { startSlackStandIn, type SlackStandIn } from "../support/slack-receiver";

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

function capturedLogger() {
  const lines: LogLine[] = [];
  const logger = createLogger({
    level: "info",
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  });
  return { logger, lines, errors: () => lines.filter((line) => line.level === 50) };
}

const failure: RunFailure = {
  functionId: "shop-fulfill-order",
  runId: "01JRUN000000000000000000AB",
  orderId: "3f1c2a9e-7b4d-4c1e-9a2b-5d6e7f801234",
  customerId: "cus_123",
  error: { name: "NonRetriableError", message: "Card declined: <insufficient_funds> & more" },
};
const runUrlTemplate = "https://app.inngest.com/env/production/runs/{runId}";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());
// The outbox is the whole table: each test starts from an empty one.
beforeEach(() => database.db.opsAlert.deleteMany());

/** A frozen clock the test moves: the grouping window and the backoff are read from it. */
function testClock(start = new Date("2026-12-02T10:00:00Z")) {
  let now = start.getTime();
  return { now: () => new Date(now), advance: (ms: number) => void (now += ms) };
}

/** The alerter as wired with Slack: the outbox on the test database, sent by @slack/webhook. */
function slackAlerter(
  slack: SlackStandIn,
  options: {
    logger: Logger;
    groupWindowMs?: number;
    now?: () => Date;
    orderUrl?: (orderId: string) => string;
    webhookUrl?: string;
  },
) {
  const webhook = new IncomingWebhook(options.webhookUrl ?? slack.url, { timeout: 5_000 });
  const outbox = createAlertOutbox({
    db: database.db,
    send: async (message) => void (await webhook.send(message)),
    logger: options.logger,
    groupWindowMs: options.groupWindowMs ?? 0,
    ...(options.now ? { now: options.now } : {}),
  });
  const alerter = createDurableAlerter({
    outbox,
    runUrlTemplate,
    ...(options.orderUrl ? { orderUrl: options.orderUrl } : {}),
  });
  return { alerter, outbox };
}

describe("Slack alerts", () => {
  let slack: SlackStandIn;

  beforeEach(async () => {
    slack = await startSlackStandIn();
  });
  afterEach(() => slack.close());

  it("posts the function, run, order, customer, error and a link to the run", async () => {
    const { logger, errors } = capturedLogger();
    const { alerter } = slackAlerter(slack, { logger });

    await alerter.runFailed(failure);

    expect(slack.accepted).toHaveLength(1);
    const body = slack.accepted[0] as { text: string; blocks: unknown[] };
    const runLink = "https://app.inngest.com/env/production/runs/01JRUN000000000000000000AB";
    for (const expected of [
      "shop-fulfill-order",
      "01JRUN000000000000000000AB",
      failure.orderId,
      "cus_123",
      "NonRetriableError",
      "Card declined: <insufficient_funds> & more",
      runLink,
    ]) {
      expect(body.text).toContain(expected);
    }
    const blocks = JSON.stringify(body.blocks);
    expect(blocks).toContain("Card declined: &lt;insufficient_funds&gt; &amp; more");
    expect(blocks).toContain(`<${runLink}|Open the run>`);
    expect(blocks).toContain("cus_123");
    expect(errors()).toHaveLength(0);
  });

  it("links the order's ops console page next to the run", async () => {
    const { logger } = capturedLogger();
    const { alerter } = slackAlerter(slack, {
      logger,
      orderUrl: (orderId) => `https://shop.example/ops/orders/${orderId}`,
    });

    await alerter.runFailed(failure);

    const body = slack.accepted[0] as { text: string; blocks: unknown[] };
    const orderLink = `https://shop.example/ops/orders/${failure.orderId}`;
    expect(body.text).toContain(`Order page: ${orderLink}`);
    expect(JSON.stringify(body.blocks)).toContain(`<${orderLink}|Open the order>`);
  });

  it("sends generic notices with their fields", async () => {
    const { logger } = capturedLogger();
    const { alerter } = slackAlerter(slack, { logger });

    await alerter.notify({
      title: "Shipped order cancelled",
      fields: { Order: "o-1", Amount: 1250 },
      runId: "r-9",
    });

    const body = slack.accepted[0] as { text: string };
    expect(body.text).toContain("Shipped order cancelled");
    expect(body.text).toContain("Order: o-1");
    expect(body.text).toContain("Amount: 1250");
    expect(body.text).toContain("https://app.inngest.com/env/production/runs/r-9");
  });

  it("answered 500 twice then 200: kept, retried with a doubling backoff, delivered exactly once", async () => {
    const { logger, lines } = capturedLogger();
    const clock = testClock();
    const { alerter, outbox } = slackAlerter(slack, { logger, now: clock.now });
    slack.answerNext([500, 500]);

    await expect(alerter.runFailed(failure)).resolves.toBeUndefined();
    expect(slack.bodies).toHaveLength(1);
    // Not due before its backoff (30 s), then due.
    clock.advance(29_000);
    expect(await outbox.drain()).toEqual({ messages: 0, delivered: 0, retrying: 0 });
    clock.advance(1_000);
    expect(await outbox.drain()).toEqual({ messages: 0, delivered: 0, retrying: 1 });
    // The second retry waits twice as long.
    clock.advance(59_000);
    expect((await outbox.drain()).delivered).toBe(0);
    clock.advance(1_000);
    expect(await outbox.drain()).toEqual({ messages: 1, delivered: 1, retrying: 0 });
    clock.advance(3600_000);
    await outbox.drain();
    // The same failure raised again (a retried failure handler) is the same alert: kept once.
    await alerter.runFailed(failure);

    expect(slack.bodies).toHaveLength(3);
    expect(slack.accepted).toHaveLength(1);
    expect(JSON.stringify(slack.accepted[0])).toContain(failure.runId);
    expect(await outbox.backlog()).toEqual({ undelivered: 0 });
    const warnings = lines.filter(
      (line) => line.msg === "alert could not be delivered to Slack; kept and retried",
    );
    expect(warnings).toHaveLength(2);
    expect(JSON.stringify(lines)).not.toContain("/services/T000");
  });

  it("Slack unreachable across a restart: the next process delivers it", async () => {
    const { logger } = capturedLogger();
    const clock = testClock();
    await slack.close();
    const before = slackAlerter(slack, { logger, now: clock.now });
    await before.alerter.runFailed(failure);
    expect(await before.outbox.backlog()).toEqual({ undelivered: 1, oldestFailingAt: clock.now() });

    // A new process (nothing in memory carried over), and Slack back at the same URL.
    const back = await startSlackStandIn();
    try {
      clock.advance(60_000);
      const after = slackAlerter(back, { logger, now: clock.now, webhookUrl: back.url });
      expect(await after.outbox.drain()).toEqual({ messages: 1, delivered: 1, retrying: 0 });
      expect(back.accepted).toHaveLength(1);
      expect(JSON.stringify(back.accepted[0])).toContain(failure.runId);
    } finally {
      await back.close();
    }
  });

  it("30 alerts of one kind within a minute: one message with the count and the first orders", async () => {
    const { logger } = capturedLogger();
    const clock = testClock();
    const { alerter, outbox } = slackAlerter(slack, { logger, groupWindowMs: 120_000, now: clock.now });
    const orderIds = Array.from(
      { length: 30 },
      (_, i) => `3f1c2a9e-7b4d-4c1e-9a2b-${String(i).padStart(12, "0")}`,
    );

    for (const [i, orderId] of orderIds.entries()) {
      await alerter.runFailed({ ...failure, runId: `01JRUN${String(i).padStart(20, "0")}`, orderId });
      clock.advance(2_000);
    }
    // Another kind is not mixed in.
    await alerter.notify({ title: "Stock problem", fields: { orderId: "o-x" } });
    expect(await outbox.drain()).toEqual({ messages: 0, delivered: 0, retrying: 0 });
    expect(slack.bodies).toHaveLength(0);

    clock.advance(120_000);
    expect(await outbox.drain()).toEqual({ messages: 2, delivered: 31, retrying: 0 });
    const grouped = slack.accepted.filter((body) => JSON.stringify(body).includes("shop-fulfill-order"));
    expect(grouped).toHaveLength(1);
    const text = (grouped[0] as { text: string }).text;
    expect(text).toContain("30× Run failed: shop-fulfill-order");
    for (const orderId of orderIds.slice(0, 5)) expect(text).toContain(orderId);
    expect(text).not.toContain(orderIds[5]);
    expect(text).toContain("and 25 more");
    expect(slack.accepted.filter((body) => JSON.stringify(body).includes("Stock problem"))).toHaveLength(1);
    outbox.close();
  });
});

describe("log alerter", () => {
  it("logs run failures at error level with the run link", async () => {
    const { logger, errors } = capturedLogger();
    const alerter = createLogAlerter({ runUrlTemplate: "http://localhost:8288/run?runID={runId}", logger });

    await alerter.runFailed(failure);

    expect(errors()).toHaveLength(1);
    expect(errors()[0]).toMatchObject({
      msg: "ALERT run failed: shop-fulfill-order",
      alert: {
        functionId: "shop-fulfill-order",
        runId: failure.runId,
        orderId: failure.orderId,
        customerId: "cus_123",
        error: failure.error,
        runUrl: `http://localhost:8288/run?runID=${failure.runId}`,
      },
    });
  });

  it("is what createAlerter builds without SLACK_WEBHOOK_URL outside production", async () => {
    const { logger, errors } = capturedLogger();
    const { alerter } = createAlerter(parseConfig({}), logger, { db: database.db, groupWindowMs: 0 });

    await alerter.notify({ title: "Authorization expires soon", fields: { Order: "o-2" } });

    expect(errors()).toEqual([
      expect.objectContaining({ msg: "ALERT Authorization expires soon", component: "alerts" }),
    ]);
  });

  it("createAlerter posts to Slack when SLACK_WEBHOOK_URL is set", async () => {
    const slack = await startSlackStandIn();
    try {
      const { logger } = capturedLogger();
      const { alerter } = createAlerter(parseConfig({ SLACK_WEBHOOK_URL: slack.url }), logger, {
        db: database.db,
        groupWindowMs: 0,
      });
      await alerter.runFailed(failure);
      expect(slack.accepted).toHaveLength(1);
    } finally {
      await slack.close();
    }
  });
});
