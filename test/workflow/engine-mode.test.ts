import { engineCheckpointing } from "../support/env";
import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(60_000);

/**
 * This suite runs once per engine mode (jest projects "checkpointing" and "classic"). Each must really take
 * its path: if the engine stopped sending `fn_id`, the checkpointing project would silently test the classic
 * path again, and this test fails.
 */
describe(`fulfill-order takes the ${engineCheckpointing ? "checkpointing" : "classic"} path`, () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
    await h.addProduct("MODE-1", 5);
  });
  afterAll(() => h.close());

  it(
    engineCheckpointing
      ? "the SDK checkpoints the order's steps to the engine, in fewer serve() calls than steps"
      : "the SDK reports one step per serve() call and never checkpoints",
    async () => {
      const { orderId } = await h.createPaidOrder({ items: [{ sku: "MODE-1", quantity: 1 }] });
      const before = h.engine.stats();
      const eventId = await h.placeOrder(orderId);
      await h.settle(2);
      const after = h.engine.stats();

      const [run] = await h.runsOfEvent(eventId);
      const steps = (await h.run(run?.run_id ?? "")).steps ?? [];
      expect((await h.order(orderId)).status).toBe("shipped");
      // claim (and the stock), charge-card, check-address (and the label), send-confirmation at least
      expect(steps.length).toBeGreaterThanOrEqual(4);
      const checkpoints = after.checkpoints - before.checkpoints;
      // This run's function only: a cron that fires meanwhile is a call of its own.
      const fulfilCalls = (stats: typeof before) => stats.callsByFunction["shop-fulfill-order"] ?? 0;
      const calls = fulfilCalls(after) - fulfilCalls(before);
      expect(h.engine.checkpointing).toBe(engineCheckpointing);
      if (engineCheckpointing) {
        expect(checkpoints).toBeGreaterThanOrEqual(steps.length);
        expect(calls).toBeGreaterThan(0);
        expect(calls).toBeLessThan(steps.length);
      } else {
        expect(checkpoints).toBe(0);
        expect(calls).toBeGreaterThan(steps.length);
      }
    },
  );
});
