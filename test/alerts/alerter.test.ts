import { parseConfig } from "../../src/config";
import { createAlerter, createLogAlerter, createSlackAlerter, type RunFailure } from "../../src/alerts";
import { createLogger } from "../../src/logger";
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

describe("Slack alerter", () => {
  let slack: SlackStandIn;

  beforeEach(async () => {
    slack = await startSlackStandIn();
  });
  afterEach(() => slack.close());

  it("posts the function, run, order, customer, error and a link to the run", async () => {
    const { logger, errors } = capturedLogger();
    const alerter = createSlackAlerter({ webhookUrl: slack.url, runUrlTemplate, logger });

    await alerter.runFailed(failure);

    expect(slack.bodies).toHaveLength(1);
    const body = slack.bodies[0] as { text: string; blocks: unknown[] };
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
    const alerter = createSlackAlerter({
      webhookUrl: slack.url,
      runUrlTemplate,
      orderUrl: (orderId) => `https://shop.example/ops/orders/${orderId}`,
      logger,
    });

    await alerter.runFailed(failure);

    const body = slack.bodies[0] as { text: string; blocks: unknown[] };
    const orderLink = `https://shop.example/ops/orders/${failure.orderId}`;
    expect(body.text).toContain(`Order page: ${orderLink}`);
    expect(JSON.stringify(body.blocks)).toContain(`<${orderLink}|Open the order>`);
  });

  it("sends generic notices with their fields", async () => {
    const { logger } = capturedLogger();
    const alerter = createSlackAlerter({ webhookUrl: slack.url, runUrlTemplate, logger });

    await alerter.notify({
      title: "Shipped order cancelled",
      fields: { Order: "o-1", Amount: 1250 },
      runId: "r-9",
    });

    const body = slack.bodies[0] as { text: string };
    expect(body.text).toContain("Shipped order cancelled");
    expect(body.text).toContain("Order: o-1");
    expect(body.text).toContain("Amount: 1250");
    expect(body.text).toContain("https://app.inngest.com/env/production/runs/r-9");
  });

  it("logs an error and does not throw when Slack answers 500", async () => {
    const { logger, errors } = capturedLogger();
    const alerter = createSlackAlerter({ webhookUrl: slack.url, runUrlTemplate, logger });
    slack.answerWith(500);

    await expect(alerter.runFailed(failure)).resolves.toBeUndefined();

    expect(slack.bodies).toHaveLength(1);
    expect(errors()).toHaveLength(1);
    expect(errors()[0]?.msg).toBe("alert could not be delivered to Slack");
    expect(JSON.stringify(errors()[0])).not.toContain("/services/T000");
  });

  it("logs an error and does not throw when nothing listens at the webhook URL", async () => {
    const { logger, errors } = capturedLogger();
    await slack.close();
    const alerter = createSlackAlerter({ webhookUrl: slack.url, runUrlTemplate, logger });

    await expect(alerter.runFailed(failure)).resolves.toBeUndefined();

    expect(errors()).toHaveLength(1);
    expect(errors()[0]).toMatchObject({ alert: { kind: "run-failed", runId: failure.runId } });
    expect(JSON.stringify(errors()[0])).not.toContain("/services/T000");
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
    const alerter = createAlerter(parseConfig({}), logger);

    await alerter.notify({ title: "Authorization expires soon", fields: { Order: "o-2" } });

    expect(errors()).toEqual([
      expect.objectContaining({ msg: "ALERT Authorization expires soon", component: "alerts" }),
    ]);
  });

  it("createAlerter posts to Slack when SLACK_WEBHOOK_URL is set", async () => {
    const slack = await startSlackStandIn();
    try {
      const { logger } = capturedLogger();
      const alerter = createAlerter(parseConfig({ SLACK_WEBHOOK_URL: slack.url }), logger);
      await alerter.runFailed(failure);
      expect(slack.bodies).toHaveLength(1);
    } finally {
      await slack.close();
    }
  });
});
