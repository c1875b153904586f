import { shipmentDelivered } from "../../src/events/contracts";
import { startCheckpointFaults, startServeProxy, type ServeProxy } from "../support/serve-proxy";
import { WorkflowHarness } from "../support/workflow-harness";

// Every step twice, and three days of crons replayed too: minutes on a loaded two-core machine.
jest.setTimeout(180_000);

describe("fulfill-order: every step run twice, as a retry after a crash would", () => {
  let h: WorkflowHarness;
  let proxy: ServeProxy;
  let faults: { close(): Promise<void> } | undefined;
  const replayed = new Set<string>();

  beforeAll(async () => {
    // In checkpointing mode a step's result reaches the engine as a checkpoint: fail that first.
    h = await WorkflowHarness.start({
      engineApi: async (engineUrl) => {
        const started = await startCheckpointFaults(engineUrl, replayed);
        faults = started;
        return started.url;
      },
    });
    proxy = await startServeProxy(`${h.appUrl}${h.services.config.INNGEST_SERVE_PATH}`, {
      replaySteps: true,
      replayed,
    });
    // In-band: out-of-band, the app would announce its own address, not the proxy in front of it.
    await h.engine.sync(proxy.url, "in-band");
  });
  afterAll(async () => {
    await proxy.close();
    await h.close();
    await faults?.close();
  });

  it("repeats no side effect: one reservation, one capture, one shipment, one e-mail each", async () => {
    await h.addProduct("TWICE-1", 10);
    const { orderId } = await h.createPaidOrder({ items: [{ sku: "TWICE-1", quantity: 3 }] });
    const eventId = await h.placeOrder(orderId);
    await h.settle(20);

    const booked = await h.order(orderId);
    const delivered = shipmentDelivered.create({
      orderId,
      trackingNumber: booked.shipment?.trackingNumber ?? "",
      deliveredAt: new Date().toISOString(),
    });
    await h.send(delivered.name, delivered.data);
    await h.settle(20);
    await h.engine.clock.advance(3 * 24 * 3600 * 1000);
    await h.settle(20);

    const [run] = await h.runsOfEvent(eventId);
    expect(run?.status).toBe("Completed");
    // claim (its id from the run's, reserving the stock), charge-card, check-address (the first look at the hold
    // with it, and the label: decision 0195), send-confirmation, mark-delivered (the event sent here does not
    // say `orderMarked`), send-review-request
    // (the recovery crons' steps, replayed as well when the clock passes their schedules, are not counted)
    const runSteps = new Set((await h.run(run?.run_id ?? "")).steps?.map((step) => step.id));
    expect([...proxy.replayed].filter((id) => runSteps.has(id))).toHaveLength(6);

    const order = await h.order(orderId);
    expect(order.status).toBe("completed");
    expect(await h.stockOf("TWICE-1")).toBe(7);
    expect(order.reservations).toHaveLength(1);
    // The repeated step's capture is Stripe's idempotent replay of the first (same key): money taken once.
    const captures = h.stripeCalls("payment_intents.capture").filter((c) => c.status === 200);
    expect(captures.filter((c) => !c.replayed)).toHaveLength(1);
    expect(new Set(captures.map((c) => c.idempotencyKey)).size).toBe(1);
    expect(await h.db.shipment.count({ where: { orderId } })).toBe(1);
    expect(h.mailsTo(/on its way/)).toHaveLength(1);
    expect(h.mailsTo(/How was your order/)).toHaveLength(1);
    expect(order.emails.map((e) => [e.idempotencyKey, e.status])).toEqual(
      expect.arrayContaining([
        [`shipped-${orderId}`, "sent"],
        [`review-${orderId}`, "sent"],
      ]),
    );
    const kinds = order.timeline.map((entry) => entry.kind);
    expect(kinds).toEqual([...new Set(kinds)]);
  });
});
