import { createResponseChecker } from "../support/openapi";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(120_000);

/**
 * Returns after delivery, end to end on the stand-ins: the customer's signed form (or the admin
 * API) asks, process-return buys an EasyPost return label (is_return) and e-mails it, the
 * stand-in's tracker delivers the parcel back (its signed webhook), and the returned lines are
 * refunded at Stripe less the restocking fee (10 % here) and restocked as `returned` movements,
 * or written off when ops say damaged; ops may also reject. Bad requests change nothing.
 */
describe("returns", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { RETURN_RESTOCKING_FEE: "10%", RETURN_WINDOW: "30d" } });
    await h.addProduct("RET-1", 20, 2500);
    await h.addProduct("RET-2", 20, 1000);
    // A cheaper variant of RET-1, and a dearer one.
    await h.addProduct("RET-1S", 5, 2000);
    await h.addProduct("RET-1XL", 5, 3000);
  });
  afterAll(() => h.close());

  // Every admin answer here is held to GET /openapi.json's contract.
  const contract = createResponseChecker();
  const api = async (path: string, init: { method?: string; body?: unknown } = {}) => {
    const method = init.method ?? (init.body === undefined ? "GET" : "POST");
    const res = await fetch(`${h.appUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    contract.check(method, path, res.status, await res.clone().json());
    return res;
  };

  const deliveredOrder = (customerId: string, items = [{ sku: "RET-1", quantity: 3 }]) =>
    h.deliveredOrder(customerId, items);

  const returnsOf = (orderId: string) =>
    h.db.return.findMany({ where: { orderId }, include: { lines: true }, orderBy: { createdAt: "asc" } });
  const refundsAtStripe = async (paymentIntentId: string) =>
    (await h.services.stripe.refunds.list({ payment_intent: paymentIntentId, limit: 100 })).data;
  const returnedMovements = (orderId: string) =>
    h.db.stockMovement.findMany({ where: { orderId, reason: "returned" } });

  it("a customer's return: one label e-mailed, the parcel back, refunded less the fee, restocked once", async () => {
    const { orderId, paymentIntentId } = await deliveredOrder("cus_ret_customer");
    const stockBefore = await h.stockOf("RET-1");
    const sig = h.services.links.sign("order", orderId);

    const form = await fetch(`${h.appUrl}/orders/${orderId}/return?sig=${sig}`);
    expect(form.status).toBe(200);
    expect(await form.text()).toContain("Ask for a return label");
    const posted = await fetch(`${h.appUrl}/orders/${orderId}/return?sig=${sig}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ "qty_RET-1": "2", reason: "no_longer_needed" }).toString(),
      redirect: "manual",
    });
    expect(posted.status).toBe(303);
    await h.settle(3);

    const [requested] = await returnsOf(orderId);
    expect(requested?.status).toBe("approved");
    expect(requested?.requestedBy).toBe("customer");
    const trackingNumber = requested?.labelTrackingNumber ?? "";
    expect(trackingNumber).not.toBe("");
    // EasyPost's return shipment: asked with the outbound addresses and is_return, swapped by EasyPost.
    const labels = h.easyPost.shipments().filter((s) => s.reference === `return-${requested?.id}`);
    expect(labels).toHaveLength(1);
    expect(labels[0]?.is_return).toBe(true);
    // EasyPost writes the verified destination's ZIP+4 on the bought label.
    expect(labels[0]?.to_address.zip).toMatch(/^94104(-\d{4})?$/);
    expect(labels[0]?.from_address.zip).toBe("97201");
    const labelMails = h.mailsTo(/return label/i).filter((m) => m.text?.includes(trackingNumber));
    expect(labelMails).toHaveLength(1);
    expect(labelMails[0]?.text).toContain(labels[0]?.postage_label?.label_url ?? "-");

    // The carrier brings it back; EasyPost repeats the delivery event.
    await h.easyPost.advanceTracker(trackingNumber, "in_transit");
    const delivered = await h.easyPost.advanceTracker(trackingNumber, "delivered");
    expect(delivered.delivery?.responseStatus).toBe(200);
    const { body, signature } = h.easyPost.signedDelivery(delivered.event.id);
    const repeat = await fetch(`${h.appUrl}/api/carrier/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-hmac-signature": signature },
      body,
    });
    expect(repeat.status).toBe(200);
    await h.settle(3);

    const [done] = await returnsOf(orderId);
    expect(done?.status).toBe("closed");
    expect(done?.receivedBy).toBe("carrier");
    expect(done?.refundAmount).toBe(4500);
    expect(done?.restockingFee).toBe(500);
    const refunds = await refundsAtStripe(paymentIntentId);
    expect(refunds.map((r) => r.amount)).toEqual([4500]);
    expect(await h.stockOf("RET-1")).toBe(stockBefore + 2);
    const movements = await returnedMovements(orderId);
    expect(movements.map((m) => [m.sku, m.delta])).toEqual([["RET-1", 2]]);
    const timeline = (await h.order(orderId)).timeline.map((e) => e.kind);
    expect(timeline.filter((k) => k === "return-received")).toHaveLength(1);
    expect(timeline.filter((k) => k === "return-refunded")).toHaveLength(1);
    expect(timeline.filter((k) => k === "return-restocked")).toHaveLength(1);
    expect(h.mailsTo(/return label/i).filter((m) => m.text?.includes(trackingNumber))).toHaveLength(1);
    // The customer's page shows the return, refunded.
    const page = await (await fetch(`${h.appUrl}/orders/${orderId}/return?sig=${sig}`)).text();
    expect(page).toContain("refunded $45.00");

    // The day's reconciliation knows the return label and expects the return's refund.
    const report = await h.services.reconciliation.run({
      date: new Date().toISOString().slice(0, 10),
      by: "cli",
    });
    const aboutThisOrder = report.mismatches.filter((m) => m.orderId === orderId);
    expect(aboutThisOrder).toEqual([]);
    expect(report.mismatches.filter((m) => m.kind === "label_without_shipment")).toEqual([]);
  });

  it("ops receive by hand, damaged: refunded less the fee, written off, no stock back", async () => {
    const { orderId, paymentIntentId } = await deliveredOrder("cus_ret_damaged", [
      { sku: "RET-1", quantity: 1 },
      { sku: "RET-2", quantity: 2 },
    ]);
    const created = await api(`/api/orders/${orderId}/returns`, {
      body: { lines: [{ sku: "RET-2", quantity: 2 }], reason: "damaged" },
    });
    expect(created.status).toBe(201);
    const { returnId } = (await created.json()) as { returnId: string };
    await h.settle(3);
    const stockBefore = await h.stockOf("RET-2");

    const received = await api(`/api/returns/${returnId}/receive`, { body: { condition: "damaged" } });
    expect(received.status).toBe(200);
    const again = await api(`/api/returns/${returnId}/receive`, { body: { condition: "damaged" } });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("return_not_actionable");
    await h.settle(3);

    const listed = (await (await api(`/api/orders/${orderId}/returns`)).json()) as {
      returns: { returnId: string; status: string; writtenOffAt: string | null; refundAmount: number }[];
    };
    expect(listed.returns).toHaveLength(1);
    expect(listed.returns[0]).toMatchObject({ returnId, status: "closed", refundAmount: 1800 });
    expect(listed.returns[0]?.writtenOffAt).not.toBeNull();
    expect((await refundsAtStripe(paymentIntentId)).map((r) => r.amount)).toEqual([1800]);
    expect(await h.stockOf("RET-2")).toBe(stockBefore);
    expect(await returnedMovements(orderId)).toHaveLength(0);
  });

  it("ops reject a return: no refund, the unused label handed back to the carrier", async () => {
    const { orderId, paymentIntentId } = await deliveredOrder("cus_ret_reject");
    const created = await api(`/api/orders/${orderId}/returns`, {
      body: { lines: [{ sku: "RET-1", quantity: 1 }], reason: "other", note: "asked by phone" },
    });
    const { returnId } = (await created.json()) as { returnId: string };
    await h.settle(3);
    expect(
      (await h.db.return.findUniqueOrThrow({ where: { id: returnId } })).labelTrackingNumber,
    ).not.toBeNull();

    const rejected = await api(`/api/returns/${returnId}/reject`, { body: { note: "outside policy" } });
    expect(rejected.status).toBe(200);
    await h.settle(3);

    const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(row.status).toBe("rejected");
    expect(row.labelRefundStatus).toBe("submitted");
    const label = h.easyPost.shipments().find((s) => s.reference === `return-${returnId}`);
    expect(label?.refund_status).toBe("submitted");
    expect(await refundsAtStripe(paymentIntentId)).toHaveLength(0);
    const again = await api(`/api/returns/${returnId}/approve`, { body: {} });
    expect(again.status).toBe(409);
  });

  it("bad requests are refused with their code and change nothing", async () => {
    const { orderId } = await deliveredOrder("cus_ret_bad");
    const ask = (body: unknown, id = orderId) => api(`/api/orders/${id}/returns`, { body });
    const codeOf = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

    const unknownLine = await ask({ lines: [{ sku: "RET-2", quantity: 1 }], reason: "other" });
    expect(unknownLine.status).toBe(400);
    expect(await codeOf(unknownLine)).toBe("return_line_invalid");

    const tooMany = await ask({ lines: [{ sku: "RET-1", quantity: 4 }], reason: "other" });
    expect(tooMany.status).toBe(400);
    expect(await codeOf(tooMany)).toBe("return_quantity_exceeded");

    const invalid = await ask({ lines: [], reason: "because" });
    expect(invalid.status).toBe(400);
    expect(await codeOf(invalid)).toBe("validation_failed");

    const first = await ask({ lines: [{ sku: "RET-1", quantity: 2 }], reason: "other" });
    expect(first.status).toBe(201);
    const beyondReturned = await ask({ lines: [{ sku: "RET-1", quantity: 2 }], reason: "other" });
    expect(beyondReturned.status).toBe(400);
    expect(await codeOf(beyondReturned)).toBe("return_quantity_exceeded");

    const missing = await ask(
      { lines: [{ sku: "RET-1", quantity: 1 }], reason: "other" },
      "00000000-0000-4000-8000-000000000000",
    );
    expect(missing.status).toBe(404);
    expect(await codeOf(missing)).toBe("order_not_found");

    const { orderId: shippedOnly } = await h.createPaidOrder({
      customerId: "cus_ret_undelivered",
      items: [{ sku: "RET-1", quantity: 1 }],
    });
    await h.placeOrder(shippedOnly);
    await h.settle(2);
    const notDelivered = await ask({ lines: [{ sku: "RET-1", quantity: 1 }], reason: "other" }, shippedOnly);
    expect(notDelivered.status).toBe(409);
    expect(await codeOf(notDelivered)).toBe("order_not_returnable");

    await h.db.shipment.updateMany({
      where: { orderId },
      data: { deliveredAt: new Date(Date.now() - 31 * 86_400_000) },
    });
    const late = await ask({ lines: [{ sku: "RET-1", quantity: 1 }], reason: "other" });
    expect(late.status).toBe(409);
    expect(await codeOf(late)).toBe("return_window_closed");

    // The customer's form says the same, with the same status.
    const sig = h.services.links.sign("order", orderId);
    const page = await fetch(`${h.appUrl}/orders/${orderId}/return?sig=${sig}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ "qty_RET-1": "1", reason: "other" }).toString(),
    });
    expect(page.status).toBe(409);
    expect(await page.text()).toContain("return window");

    expect(await returnsOf(orderId)).toHaveLength(1);
    expect(await returnsOf(shippedOnly)).toHaveLength(0);
  });

  it("an exchange: the new item ships once the return is back, the difference refunded once", async () => {
    const { orderId, paymentIntentId } = await deliveredOrder("cus_ret_exchange", [
      { sku: "RET-1", quantity: 1 },
    ]);
    const dearer = await api(`/api/orders/${orderId}/returns`, {
      body: { lines: [{ sku: "RET-1", quantity: 1, exchangeSku: "RET-1XL" }], reason: "wrong_item" },
    });
    // Paid before checkout saved cards: a dearer item's difference has nothing to be charged to.
    expect(dearer.status).toBe(409);
    expect(((await dearer.json()) as { error: { code: string } }).error.code).toBe(
      "exchange_needs_saved_card",
    );
    const unknown = await api(`/api/orders/${orderId}/returns`, {
      body: { lines: [{ sku: "RET-1", quantity: 1, exchangeSku: "NOPE" }], reason: "wrong_item" },
    });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("exchange_sku_invalid");
    expect(await returnsOf(orderId)).toHaveLength(0);

    const variantBefore = await h.stockOf("RET-1S");
    const returnedBefore = await h.stockOf("RET-1");
    const created = await api(`/api/orders/${orderId}/returns`, {
      body: { lines: [{ sku: "RET-1", quantity: 1, exchangeSku: "RET-1S" }], reason: "wrong_item" },
    });
    expect(created.status).toBe(201);
    const { returnId } = (await created.json()) as { returnId: string };
    await h.settle(3);
    // EXCHANGE_SHIPS=on_receipt (the default): nothing ships before the return is back.
    expect(h.easyPost.shipments().filter((s) => s.reference === `exchange-${returnId}`)).toHaveLength(0);
    expect(await h.stockOf("RET-1S")).toBe(variantBefore);

    const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    const trackingNumber = row.labelTrackingNumber ?? "";
    await h.easyPost.advanceTracker(trackingNumber, "in_transit");
    const delivered = await h.easyPost.advanceTracker(trackingNumber, "delivered");
    const { body, signature } = h.easyPost.signedDelivery(delivered.event.id);
    await fetch(`${h.appUrl}/api/carrier/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-hmac-signature": signature },
      body,
    });
    await h.settle(3);

    const shipped = h.easyPost.purchased().filter((s) => s.reference === `exchange-${returnId}`);
    expect(shipped).toHaveLength(1);
    expect(shipped[0]?.is_return).toBe(false);
    expect(shipped[0]?.to_address.zip).toMatch(/^97201(-\d{4})?$/);
    const done = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(done.status).toBe("closed");
    expect(done.exchangeTrackingNumber).toBe(shipped[0]?.tracking_code);
    expect(
      h
        .mailsTo(/exchange .* is on its way/i)
        .filter((m) => m.text?.includes(done.exchangeTrackingNumber ?? "-")),
    ).toHaveLength(1);
    // 2500 back in exchange for 2000: 500 refunded, no restocking fee on an exchange.
    expect((await refundsAtStripe(paymentIntentId)).map((r) => r.amount)).toEqual([500]);
    expect(await h.stockOf("RET-1S")).toBe(variantBefore - 1);
    expect(await h.stockOf("RET-1")).toBe(returnedBefore + 1);
    const movements = await h.db.stockMovement.findMany({ where: { orderId }, orderBy: { id: "asc" } });
    expect(movements.filter((m) => m.sku === "RET-1S").map((m) => [m.reason, m.delta])).toEqual([
      ["reserved", -1],
    ]);
  });

  it("EXCHANGE_SHIPS=at_once: the new item ships with the label, before the return is back", async () => {
    await h.restartService({ EXCHANGE_SHIPS: "at_once" });
    try {
      const { orderId } = await deliveredOrder("cus_ret_exchange_now", [{ sku: "RET-1", quantity: 1 }]);
      const created = await api(`/api/orders/${orderId}/returns`, {
        body: { lines: [{ sku: "RET-1", quantity: 1, exchangeSku: "RET-1S" }], reason: "wrong_item" },
      });
      const { returnId } = (await created.json()) as { returnId: string };
      await h.settle(3);
      const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
      expect(row.status).toBe("approved");
      expect(row.receivedAt).toBeNull();
      expect(row.exchangeTrackingNumber).not.toBeNull();
      expect(h.easyPost.purchased().filter((s) => s.reference === `exchange-${returnId}`)).toHaveLength(1);

      await api(`/api/returns/${returnId}/receive`, { body: { condition: "resellable" } });
      await h.settle(3);
      const done = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
      expect(done.status).toBe("closed");
      expect(h.easyPost.purchased().filter((s) => s.reference === `exchange-${returnId}`)).toHaveLength(1);
      expect(
        h
          .mailsTo(/exchange .* is on its way/i)
          .filter((m) => m.text?.includes(row.exchangeTrackingNumber ?? "-")),
      ).toHaveLength(1);
    } finally {
      await h.restartService({});
    }
  });

  it("RETURN_APPROVAL=ops: a customer's return waits for ops, then gets its label", async () => {
    await h.restartService({ RETURN_APPROVAL: "ops" });
    try {
      const { orderId } = await deliveredOrder("cus_ret_approval", [{ sku: "RET-1", quantity: 1 }]);
      const sig = h.services.links.sign("order", orderId);
      const posted = await fetch(`${h.appUrl}/orders/${orderId}/return?sig=${sig}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ "qty_RET-1": "1", reason: "wrong_item" }).toString(),
        redirect: "manual",
      });
      expect(posted.status).toBe(303);
      await h.settle(3);
      const [waiting] = await returnsOf(orderId);
      expect(waiting?.status).toBe("requested");
      expect(waiting?.labelTrackingNumber).toBeNull();

      const approved = await api(`/api/returns/${waiting?.id}/approve`, { body: {} });
      expect(approved.status).toBe(200);
      await h.settle(3);
      const [labelled] = await returnsOf(orderId);
      expect(labelled?.status).toBe("approved");
      expect(labelled?.labelSentAt).not.toBeNull();
    } finally {
      await h.restartService({});
    }
  });

  it("an order refunded by hand meanwhile: the return refunds only what is left, and ops hear of it", async () => {
    const { orderId, paymentIntentId } = await deliveredOrder("cus_ret_refunded", [
      { sku: "RET-2", quantity: 2 },
    ]);
    const created = await api(`/api/orders/${orderId}/returns`, {
      body: { lines: [{ sku: "RET-2", quantity: 2 }], reason: "other" },
    });
    const { returnId } = (await created.json()) as { returnId: string };
    await h.settle(3);
    const byHand = await api(`/api/orders/${orderId}/refund`, { body: { amount: 1500, reason: "goodwill" } });
    expect(byHand.status).toBe(201);
    const slackBefore = h.slack.bodies.length;
    await api(`/api/returns/${returnId}/receive`, { body: { condition: "resellable" } });
    await h.settle(3);

    const done = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(done.status).toBe("closed");
    // 2000 less 10 % is 1800 due; 500 was left after the 1500 by hand.
    expect(done.refundAmount).toBe(500);
    expect((await refundsAtStripe(paymentIntentId)).map((r) => r.amount).sort((a, b) => a - b)).toEqual([
      500, 1500,
    ]);
    expect(JSON.stringify(h.slack.bodies.slice(slackBefore))).toContain("Return refund exceeds");
  });
});
