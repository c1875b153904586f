import { captureLog } from "../support/log-capture";
import { WorkflowHarness } from "../support/workflow-harness";
import { runDeclinedOrder } from "./full-order";

jest.setTimeout(90_000);

interface Line {
  level: number;
  msg: string;
  orderId?: string;
  [key: string]: unknown;
}

/** A stack anywhere in a line: an `err.stack`, or one quoted in a message. */
const hasStack = (line: Line) => /\\n\s+at /.test(JSON.stringify(line));

describe("how much one failed step logs", () => {
  const log = captureLog("info");
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ serviceLogger: log.logger });
    await h.addProduct("VOLUME-1", 10);
  });
  afterAll(() => h.close());

  const warnings = (orderId: string) =>
    (log.lines() as Line[]).filter((line) => line.level >= 40 && JSON.stringify(line).includes(orderId));

  it("a step retried twice: one warn line per failed attempt, no stack", async () => {
    const { orderId } = await h.createPaidOrder({ items: [{ sku: "VOLUME-1", quantity: 1 }] });
    h.sandbox.injectFailure("payment_intents.capture", { kind: "server_error" }, 2);
    await h.placeOrder(orderId);
    await h.settle();
    expect((await h.order(orderId)).status).toBe("shipped");

    const lines = warnings(orderId);
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [40, "workflow step failed; it will be retried"],
      [40, "workflow step failed; it will be retried"],
    ]);
    expect(lines.filter(hasStack)).toEqual([]);
  });

  it("a step that fails for good: its stack once, at error", async () => {
    const { orderId } = await runDeclinedOrder(h, "VOLUME-1");

    const lines = warnings(orderId);
    expect(lines.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual([
      "workflow step failed for good",
    ]);
    expect(lines.filter(hasStack).map((line) => line.msg)).toEqual(["workflow step failed for good"]);
  });
});
