import type { RunView } from "../support/engine-runs";
import { startCheckpointFaults, startServeProxy, type ServeProxy } from "../support/serve-proxy";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

// Every step twice, on a loaded two-core machine: minutes.
jest.setTimeout(240_000);

/**
 * process-return's money and stock steps run again after their write committed but before the
 * engine kept their result (a crash between the two), as replayed-steps.test.ts does for
 * fulfill-order: the proxy drops the first answer of every step, so each runs twice. Each must
 * find its own write and do nothing more: one label, one e-mail, one refund at Stripe, the stock
 * back once, written off once; for a dearer exchange one charge, one reservation, one parcel.
 */
describe("process-return: every step run twice, as a retry after a crash would", () => {
  let h: WorkflowHarness;
  let proxy: ServeProxy;
  let faults: { close(): Promise<void> } | undefined;
  const replayed = new Set<string>();

  beforeAll(async () => {
    h = await WorkflowHarness.start({
      env: { RETURN_RESTOCKING_FEE: "10%", RETURN_WINDOW: "30d" },
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
    await h.engine.sync(proxy.url, "in-band");
    // Stripe's webhook is what starts each order here, as in production (not the missed-webhook sweep).
    h.sandbox.setWebhookUrl(`${h.appUrl}/api/stripe/webhook`);
    await h.addProduct("RPL-1", 20, 2500);
    await h.addProduct("RPL-1XL", 5, 3000);
  });
  afterAll(async () => {
    await proxy.close();
    await h.close();
    await faults?.close();
  });

  const api = (path: string, body: unknown) =>
    fetch(`${h.appUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  const deliveredOrder = async (customerId: string, quantity: number) => {
    const delivered = await h.deliveredCheckoutOrder(customerId, [{ sku: "RPL-1", quantity }]);
    expect(delivered.webhookDeliveries).toBeGreaterThan(0);
    return { orderId: delivered.order.id, paymentIntentId: delivered.paymentIntentId };
  };

  async function returned(orderId: string, body: unknown, condition?: "damaged") {
    const created = await api(`/api/orders/${orderId}/returns`, body);
    expect(created.status).toBe(201);
    const { returnId } = (await created.json()) as { returnId: string };
    await h.settle(20);
    const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(row.labelTrackingNumber).not.toBeNull();
    if (condition) {
      expect((await api(`/api/returns/${returnId}/receive`, { condition })).status).toBe(200);
    } else {
      await h.easyPost.advanceTracker(row.labelTrackingNumber as string, "in_transit");
      await h.easyPost.advanceTracker(row.labelTrackingNumber as string, "delivered");
    }
    await h.settle(20);
    return returnId;
  }

  /** The return's run, and which of its steps the proxy ran twice. */
  async function replayedStepsOf(returnId: string): Promise<{ run: RunView; names: string[] }> {
    const [run] = await h.runsOfEvent(`return-requested-${returnId}`);
    expect(run?.status).toBe("Completed");
    const steps = (await h.run(run?.run_id ?? "")).steps ?? [];
    return {
      run: run as RunView,
      names: steps.filter((step) => proxy.replayed.has(step.id)).map((step) => step.name ?? step.id),
    };
  }
  const refundsAt = async (paymentIntentId: string) =>
    (await h.services.stripe.refunds.list({ payment_intent: paymentIntentId, limit: 100 })).data.map(
      (refund) => refund.amount,
    );
  const uniqueKinds = async (orderId: string) => {
    const kinds = (await h.order(orderId)).timeline
      .map((entry) => entry.kind)
      .filter((k) => /^(return|exchange)-/.test(k));
    expect(kinds).toEqual([...new Set(kinds)]);
  };

  it("a return refunded and restocked: one label, one e-mail, one refund, the stock back once", async () => {
    const { orderId, paymentIntentId } = await deliveredOrder("cus_rpl_refund", 3);
    const stockBefore = await h.stockOf("RPL-1");
    const returnId = await returned(orderId, { lines: [{ sku: "RPL-1", quantity: 2 }], reason: "other" });

    const { names } = await replayedStepsOf(returnId);
    expect(names).toEqual(
      expect.arrayContaining([
        "create-return-label",
        "email-return-label",
        "refund-return",
        "restock-return",
        "close-return",
      ]),
    );
    const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(row.status).toBe("closed");
    expect(row.refundAmount).toBe(4500);
    expect(await refundsAt(paymentIntentId)).toEqual([4500]);
    expect(await h.db.refund.count({ where: { orderId } })).toBe(1);
    expect(await h.stockOf("RPL-1")).toBe(stockBefore + 2);
    const movements = await h.db.stockMovement.findMany({ where: { orderId, reason: "returned" } });
    expect(movements.map((m) => m.delta)).toEqual([2]);
    expect(h.easyPost.shipments().filter((s) => s.reference === `return-${returnId}`)).toHaveLength(1);
    expect(
      h.mailsTo(/return label/i).filter((m) => m.text?.includes(row.labelTrackingNumber ?? "-")),
    ).toHaveLength(1);
    await uniqueKinds(orderId);
  });

  it("a damaged return: refunded once, written off once, no stock back", async () => {
    const { orderId, paymentIntentId } = await deliveredOrder("cus_rpl_damaged", 2);
    const stockBefore = await h.stockOf("RPL-1");
    const returnId = await returned(
      orderId,
      { lines: [{ sku: "RPL-1", quantity: 1 }], reason: "damaged" },
      "damaged",
    );

    const { names } = await replayedStepsOf(returnId);
    expect(names).toContain("write-off-return");
    const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(row.status).toBe("closed");
    expect(row.writtenOffAt).not.toBeNull();
    expect(await refundsAt(paymentIntentId)).toEqual([2250]);
    expect(await h.stockOf("RPL-1")).toBe(stockBefore);
    const kinds = (await h.order(orderId)).timeline.map((entry) => entry.kind);
    expect(kinds.filter((kind) => kind === "return-written-off")).toHaveLength(1);
    await uniqueKinds(orderId);
  });

  it("a dearer exchange: charged once, reserved once, shipped once, e-mailed once", async () => {
    const { orderId, paymentIntentId } = await deliveredOrder("cus_rpl_exchange", 1);
    const stockBefore = await h.stockOf("RPL-1XL");
    const returnId = await returned(orderId, {
      lines: [{ sku: "RPL-1", quantity: 1, exchangeSku: "RPL-1XL" }],
      reason: "wrong_item",
    });

    const { names } = await replayedStepsOf(returnId);
    expect(names).toEqual(
      expect.arrayContaining([
        "charge-exchange-difference",
        "reserve-exchange",
        "ship-exchange",
        "email-exchange-tracking",
      ]),
    );
    const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(row.status).toBe("closed");
    expect(row.exchangeChargeStatus).toBe("charged");
    const charges = h
      .stripeCalls("payment_intents.create")
      .filter((call) => call.idempotencyKey === `exchange-charge-${returnId}` && call.status === 200);
    expect(charges.filter((call) => !call.replayed)).toHaveLength(1);
    expect(await refundsAt(row.exchangeChargeIntentId as string)).toEqual([]);
    expect(await refundsAt(paymentIntentId)).toEqual([]);
    expect(await h.stockOf("RPL-1XL")).toBe(stockBefore - 1);
    const reserved = await h.db.stockMovement.findMany({ where: { orderId, sku: "RPL-1XL" } });
    expect(reserved.map((m) => m.delta)).toEqual([-1]);
    expect(h.easyPost.purchased().filter((s) => s.reference === `exchange-${returnId}`)).toHaveLength(1);
    expect(
      h
        .mailsTo(/exchange .* is on its way/i)
        .filter((m) => m.text?.includes(row.exchangeTrackingNumber ?? "-")),
    ).toHaveLength(1);
    await uniqueKinds(orderId);
  });
});
