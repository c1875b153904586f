import { adminToken, WorkflowHarness } from "../support/workflow-harness";
import { eventually, gate } from "../support/eventually";
import { createResponseChecker } from "../support/openapi";

jest.setTimeout(120_000);

/**
 * A dearer exchange, end to end on the stand-ins and the production path: checkout saves the
 * card (a Stripe Customer, setup_future_usage=off_session), the intake keeps the Customer and
 * card from the PaymentIntent, and process-return charges the difference off-session once
 * (Stripe key exchange-charge-<returnId>) before the new item ships; a charge the bank refuses
 * ships nothing, charges nothing and leaves the return to ops.
 */
describe("exchanges that cost more", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { RETURN_RESTOCKING_FEE: "10%", RETURN_WINDOW: "30d" } });
    await h.addProduct("EXC-1", 20, 2500);
    await h.addProduct("EXC-1XL", 5, 3000);
  });
  afterAll(() => h.close());
  afterEach(() => {
    h.sandbox.clearFailures();
    h.easyPost.clearFailures();
  });

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

  const deliveredOrder = async (customerId: string) => {
    const { order, paymentIntentId } = await h.deliveredCheckoutOrder(customerId, [
      { sku: "EXC-1", quantity: 1 },
    ]);
    const paymentIntent = h.sandbox.paymentIntent(paymentIntentId);
    if (!paymentIntent) throw new Error(`no PaymentIntent ${paymentIntentId} at the stand-in`);
    return { order, paymentIntent };
  };

  /** The return parcel back at the warehouse: the tracker's delivery, and EasyPost repeating it. */
  async function returnDeliveredTwice(returnId: string) {
    const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    const trackingNumber = row.labelTrackingNumber ?? "";
    expect(trackingNumber).not.toBe("");
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
  }

  const executedCharges = (returnId: string) =>
    h
      .stripeCalls("payment_intents.create")
      .filter((call) => call.idempotencyKey === `exchange-charge-${returnId}` && !call.replayed);
  const exchangeParcels = (returnId: string) =>
    h.easyPost.purchased().filter((s) => s.reference === `exchange-${returnId}`);
  const timelineOf = async (orderId: string) => (await h.order(orderId)).timeline.map((e) => e.kind);

  it("checkout saves the card: the order keeps Stripe's Customer and card", async () => {
    const { order, paymentIntent } = await deliveredOrder("cus_exc_saved");
    const session = h.stripeCalls("checkout.sessions.create").at(-1);
    expect(session?.params).toMatchObject({
      customer_creation: "always",
      payment_intent_data: { setup_future_usage: "off_session" },
    });
    expect(paymentIntent.customer).toMatch(/^cus_/);
    expect(order.stripeCustomerId).toBe(paymentIntent.customer);
    expect(order.paymentMethodId).toBe(paymentIntent.payment_method);
    // The customer's return form offers the dearer item, saying what more will be charged.
    const sig = h.services.links.sign("order", order.id);
    const form = await (await fetch(`${h.appUrl}/orders/${order.id}/return?sig=${sig}`)).text();
    expect(form).toContain('value="EXC-1XL"');
    expect(form).toContain("$5.00 more, charged to your card");
  });

  it("a dearer exchange: the difference charged once, the new item shipped once, though the carrier's delivery comes twice", async () => {
    const { order } = await deliveredOrder("cus_exc_dearer");
    const orderId = order.id;
    const stockBefore = await h.stockOf("EXC-1XL");
    const created = await api(`/api/orders/${orderId}/returns`, {
      body: { lines: [{ sku: "EXC-1", quantity: 1, exchangeSku: "EXC-1XL" }], reason: "wrong_item" },
    });
    expect(created.status).toBe(201);
    const { returnId } = (await created.json()) as { returnId: string };
    await h.settle(3);
    // EXCHANGE_SHIPS=on_receipt: nothing charged or shipped before the return is back.
    expect(executedCharges(returnId)).toHaveLength(0);
    expect(exchangeParcels(returnId)).toHaveLength(0);

    await returnDeliveredTwice(returnId);

    const done = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(done.status).toBe("closed");
    expect(done.exchangeChargeStatus).toBe("charged");
    expect(done.exchangeChargeAmount).toBe(500);
    const charges = executedCharges(returnId);
    expect(charges).toHaveLength(1);
    expect(charges[0]?.params).toMatchObject({
      amount: "500",
      customer: order.stripeCustomerId,
      payment_method: order.paymentMethodId,
      off_session: "true",
      confirm: "true",
      metadata: { orderId, returnId },
    });
    const intent = h.sandbox.paymentIntent(done.exchangeChargeIntentId ?? "-");
    expect(intent).toMatchObject({ status: "succeeded", amount_received: 500 });
    expect(exchangeParcels(returnId)).toHaveLength(1);
    expect(done.exchangeTrackingNumber).toBe(exchangeParcels(returnId)[0]?.tracking_code);
    expect(await h.stockOf("EXC-1XL")).toBe(stockBefore - 1);
    // The returned line was exchanged, not refunded: no money back on the order's PaymentIntent.
    expect(done.refundAmount).toBe(0);
    const refunds = await h.services.stripe.refunds.list({ payment_intent: order.paymentIntentId ?? "-" });
    expect(refunds.data).toHaveLength(0);
    const kinds = await timelineOf(orderId);
    expect(kinds.filter((k) => k === "exchange-charged")).toHaveLength(1);
    expect(kinds.filter((k) => k === "exchange-shipped")).toHaveLength(1);
    expect(
      h
        .mailsTo(/exchange .* is on its way/i)
        .filter((m) => m.text?.includes(done.exchangeTrackingNumber ?? "-")),
    ).toHaveLength(1);
    // The exchange parcel's own tracker: its delivery recorded once, though EasyPost repeats it.
    const exchangeTracking = done.exchangeTrackingNumber ?? "-";
    await h.easyPost.advanceTracker(exchangeTracking, "in_transit");
    const exchangeDelivered = await h.easyPost.advanceTracker(exchangeTracking, "delivered");
    const signed = h.easyPost.signedDelivery(exchangeDelivered.event.id);
    const again = await fetch(`${h.appUrl}/api/carrier/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-hmac-signature": signed.signature },
      body: signed.body,
    });
    expect(again.status).toBe(200);
    const tracked = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(tracked.exchangeTrackerStatus).toBe("delivered");
    expect(tracked.exchangeDeliveredAt).not.toBeNull();
    expect((await timelineOf(orderId)).filter((k) => k === "exchange-delivered")).toHaveLength(1);
    const view = (await (await api(`/api/returns/${returnId}`)).json()) as {
      exchange: { charge: { status: string; amount: number }; trackerStatus: string };
    };
    expect(view.exchange.charge).toMatchObject({ status: "charged", amount: 500 });
    expect(view.exchange.trackerStatus).toBe("delivered");

    // The reconciliation counts the exchange's charge as ours, not as a charge without an order.
    const run = await fetch(`${h.appUrl}/api/reconciliation/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      // The shop day the Stripe stand-in's clock is in (the reconciliation's default zone is UTC).
      body: JSON.stringify({ date: new Date(h.sandbox.clock().now).toISOString().slice(0, 10) }),
    });
    expect(run.status).toBe(201);
    const report = (await run.json()) as {
      totals: Record<string, { stripe: { charges: number }; ours: { captured: number } }>;
      mismatches: { kind: string; reference: string }[];
    };
    const chargeId = intent?.latest_charge as string;
    expect(report.mismatches.filter((m) => m.reference === chargeId)).toEqual([]);
    const totals = report.totals[intent?.currency ?? "-"];
    expect(totals?.stripe.charges).toBeGreaterThanOrEqual(500);
    expect(totals?.ours.captured).toBe(totals?.stripe.charges);
  });

  it("the bank declines the difference: nothing ships, nothing is charged, the return waits for ops", async () => {
    const { order } = await deliveredOrder("cus_exc_refused");
    const orderId = order.id;
    const stockBefore = await h.stockOf("EXC-1XL");
    const slackBefore = h.slack.bodies.length;
    h.sandbox.injectFailure("payment_intents.create", { kind: "decline", code: "card_declined" });
    const created = await api(`/api/orders/${orderId}/returns`, {
      body: { lines: [{ sku: "EXC-1", quantity: 1, exchangeSku: "EXC-1XL" }], reason: "wrong_item" },
    });
    const { returnId } = (await created.json()) as { returnId: string };
    await h.settle(3);
    await returnDeliveredTwice(returnId);

    const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(row.status).toBe("received");
    expect(row.exchangeChargeStatus).toBe("failed");
    expect(row.exchangeChargeError).not.toBeNull();
    expect(row.exchangeCheckoutSessionId).toBeNull();
    // One attempt at Stripe, refused: its PaymentIntent awaits a payment method, no money moved.
    expect(executedCharges(returnId)).toHaveLength(1);
    const intent = h.sandbox.paymentIntent(row.exchangeChargeIntentId ?? "-");
    expect(intent?.status).toBe("requires_payment_method");
    expect(intent?.amount_received).toBe(0);
    expect(exchangeParcels(returnId)).toHaveLength(0);
    expect(row.exchangeTrackingNumber).toBeNull();
    expect(await h.stockOf("EXC-1XL")).toBe(stockBefore);
    const kinds = await timelineOf(orderId);
    expect(kinds.filter((k) => k === "exchange-charge-failed")).toHaveLength(1);
    expect(kinds).not.toContain("exchange-reserved");
    expect(kinds).not.toContain("exchange-shipped");
    const mails = h.mailsTo(/exchange for order .* is on hold/i);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.text).toContain("$5.00");
    expect(JSON.stringify(h.slack.bodies.slice(slackBefore))).toContain(
      "the difference could not be charged",
    );
    const view = (await (await api(`/api/returns/${returnId}`)).json()) as {
      status: string;
      exchange: { charge: { status: string } };
    };
    expect(view).toMatchObject({ status: "received", exchange: { charge: { status: "failed" } } });

    // Ops settle with the customer and close it; still nothing charged or shipped.
    const closed = await api(`/api/returns/${returnId}/close`, { body: { note: "refunded by hand" } });
    expect(closed.status).toBe(200);
    await h.settle(3);
    expect((await h.db.return.findUniqueOrThrow({ where: { id: returnId } })).status).toBe("closed");
    expect(executedCharges(returnId)).toHaveLength(1);
    expect(exchangeParcels(returnId)).toHaveLength(0);
    expect(h.mailsTo(/exchange for order .* is on hold/i)).toHaveLength(1);
  });

  /**
   * A dearer exchange whose off-session charge the bank refuses with authentication_required,
   * the return received: the run reserves the new item, creates the return's Checkout Session
   * and e-mails its URL, then waits for the payment.
   */
  async function awaitingCheckout(customerId: string) {
    const { order } = await deliveredOrder(customerId);
    const stockBefore = await h.stockOf("EXC-1XL");
    h.sandbox.injectFailure("payment_intents.create", { kind: "decline", code: "authentication_required" });
    const created = await api(`/api/orders/${order.id}/returns`, {
      body: { lines: [{ sku: "EXC-1", quantity: 1, exchangeSku: "EXC-1XL" }], reason: "wrong_item" },
    });
    const { returnId } = (await created.json()) as { returnId: string };
    await h.settle(3);
    await returnDeliveredTwice(returnId);
    const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(row.status).toBe("received");
    expect(row.exchangeChargeStatus).toBe("awaiting_payment");
    const sessionId = row.exchangeCheckoutSessionId ?? "-";
    const session = await h.services.stripe.checkout.sessions.retrieve(sessionId);
    expect(session).toMatchObject({
      status: "open",
      mode: "payment",
      amount_total: 500,
      client_reference_id: null,
      metadata: { returnId, orderId: order.id, purpose: "exchange-difference" },
    });
    expect(
      h
        .stripeCalls("checkout.sessions.create")
        .filter((call) => call.idempotencyKey === `exchange-checkout-${returnId}` && !call.replayed),
    ).toHaveLength(1);
    // The new item is held for the customer; nothing shipped, no "on hold" e-mail.
    expect(await h.stockOf("EXC-1XL")).toBe(stockBefore - 1);
    expect(exchangeParcels(returnId)).toHaveLength(0);
    const mails = h.mailsTo(/please confirm the payment of the difference/i);
    expect(mails.filter((m) => m.text?.includes(session.url ?? "-"))).toHaveLength(1);
    expect(
      h.mailsTo(/exchange for order .* is on hold/i).filter((m) => m.messageId?.includes(returnId)),
    ).toHaveLength(0);
    return { order, returnId, sessionId, stockBefore };
  }

  it("authentication required, paid on the Checkout page: shipped once though the webhook comes twice", async () => {
    const { order, returnId, sessionId, stockBefore } = await awaitingCheckout("cus_exc_checkout_paid");
    const paid = await h.sandbox.completeCheckoutSession(sessionId, "paid", { deliver: false });
    const completed = paid.events.find((e) => e.type === "checkout.session.completed");
    // Stripe delivers the completion twice, the second while the first is being handled.
    const deliver = async () => {
      const { payload, header } = h.sandbox.signedDelivery(completed?.id ?? "-");
      const res = await fetch(`${h.appUrl}/api/stripe/webhook`, {
        method: "POST",
        headers: { "content-type": "application/json", "stripe-signature": header },
        body: payload,
      });
      return { status: res.status, body: (await res.json()) as { outcome: string } };
    };
    const answers = await Promise.all([deliver(), deliver()]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(answers.map((a) => a.body.outcome).sort()).toEqual(["duplicate", "processed"]);
    await eventually("exchange shipped and closed", async () => {
      await h.settle(2);
      return (await h.db.return.findUniqueOrThrow({ where: { id: returnId } })).status === "closed";
    });
    await h.settle(2);

    const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    const session = await h.services.stripe.checkout.sessions.retrieve(sessionId);
    expect(row.exchangeChargeStatus).toBe("charged");
    expect(row.exchangeChargeAmount).toBe(500);
    expect(row.exchangeChargeIntentId).toBe(session.payment_intent);
    expect(exchangeParcels(returnId)).toHaveLength(1);
    expect(row.exchangeTrackingNumber).toBe(exchangeParcels(returnId)[0]?.tracking_code);
    expect(await h.stockOf("EXC-1XL")).toBe(stockBefore - 1);
    const kinds = await timelineOf(order.id);
    expect(kinds.filter((k) => k === "exchange-charged")).toHaveLength(1);
    expect(kinds.filter((k) => k === "exchange-shipped")).toHaveLength(1);
    expect(kinds.filter((k) => k === "exchange-reserved")).toHaveLength(1);
    expect(kinds).not.toContain("exchange-unpaid");
    expect(
      h
        .mailsTo(/exchange .* is on its way/i)
        .filter((m) => m.text?.includes(row.exchangeTrackingNumber ?? "-")),
    ).toHaveLength(1);
    // No refund of the difference: the customer has the item.
    const refunds = await h.services.stripe.refunds.list({
      payment_intent: row.exchangeChargeIntentId ?? "-",
    });
    expect(refunds.data).toHaveLength(0);

    // The reconciliation counts the Checkout payment as the exchange's charge.
    const run = await fetch(`${h.appUrl}/api/reconciliation/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ date: new Date(h.sandbox.clock().now).toISOString().slice(0, 10) }),
    });
    expect(run.status).toBe(201);
    const report = (await run.json()) as { mismatches: { kind: string; reference: string }[] };
    const intent = h.sandbox.paymentIntent(row.exchangeChargeIntentId ?? "-");
    expect(intent).toMatchObject({ status: "succeeded", amount_received: 500 });
    expect(report.mismatches.filter((m) => m.reference === intent?.latest_charge)).toEqual([]);
  });

  it("authentication required, never paid: at the window's end the page expired, the item released, the exchange closed unpaid", async () => {
    const { order, returnId, sessionId, stockBefore } = await awaitingCheckout("cus_exc_checkout_unpaid");
    const slackBefore = h.slack.bodies.length;
    // EXCHANGE_PAYMENT_WINDOW (23h by default) passes on the engine's frozen clock.
    await h.engine.clock.advance(24 * 3600_000);
    await eventually("exchange closed unpaid", async () => {
      await h.settle(2);
      return (
        (await h.db.return.findUniqueOrThrow({ where: { id: returnId } })).exchangeChargeStatus === "unpaid"
      );
    });
    await h.settle(2);

    const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(row.status).toBe("closed");
    expect(row.exchangeReleasedAt).not.toBeNull();
    expect(await h.stockOf("EXC-1XL")).toBe(stockBefore);
    expect(exchangeParcels(returnId)).toHaveLength(0);
    const session = await h.services.stripe.checkout.sessions.retrieve(sessionId);
    expect(session.status).toBe("expired");
    const kinds = await timelineOf(order.id);
    expect(kinds.filter((k) => k === "exchange-released")).toHaveLength(1);
    expect(kinds.filter((k) => k === "exchange-unpaid")).toHaveLength(1);
    expect(kinds).not.toContain("exchange-charged");
    expect(kinds).not.toContain("exchange-shipped");
    expect(JSON.stringify(h.slack.bodies.slice(slackBefore))).toContain(
      "the difference was not paid in time",
    );
    // Too late: Stripe no longer takes payment on the page.
    await expect(async () => h.sandbox.completeCheckoutSession(sessionId, "paid")).rejects.toThrow(
      /is expired, not open/,
    );
  });

  it("authentication required, ops close the return, then the customer pays: the payment refunded once, nothing shipped", async () => {
    const { order, returnId, sessionId, stockBefore } = await awaitingCheckout("cus_exc_checkout_late");
    const closed = await api(`/api/returns/${returnId}/close`, { body: { note: "settled by phone" } });
    expect(closed.status).toBe(200);
    await h.settle(3);
    // The cancelled run's cleanup puts the held item back.
    expect(await h.stockOf("EXC-1XL")).toBe(stockBefore);

    const paid = await h.sandbox.completeCheckoutSession(sessionId, "paid", { deliver: false });
    const completed = paid.events.find((e) => e.type === "checkout.session.completed");
    const deliver = async () => {
      const { payload, header } = h.sandbox.signedDelivery(completed?.id ?? "-");
      const res = await fetch(`${h.appUrl}/api/stripe/webhook`, {
        method: "POST",
        headers: { "content-type": "application/json", "stripe-signature": header },
        body: payload,
      });
      return res.status;
    };
    expect(await deliver()).toBe(200);
    expect(await deliver()).toBe(200);
    await h.settle(3);

    const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    const session = await h.services.stripe.checkout.sessions.retrieve(sessionId);
    expect(row.status).toBe("closed");
    expect(row.exchangeChargeStatus).toBe("refunded");
    expect(row.exchangeChargeIntentId).toBe(session.payment_intent);
    const refunds = await h.services.stripe.refunds.list({
      payment_intent: row.exchangeChargeIntentId ?? "-",
    });
    expect(refunds.data.map((r) => r.amount)).toEqual([500]);
    expect(exchangeParcels(returnId)).toHaveLength(0);
    expect(await h.stockOf("EXC-1XL")).toBe(stockBefore);
    const kinds = await timelineOf(order.id);
    expect(kinds.filter((k) => k === "exchange-charge-refunded")).toHaveLength(1);
    expect(kinds).not.toContain("exchange-shipped");
  });

  it("the exchange's parcel cannot be booked, every retry spent: stock back and the charge refunded once, the exchange failed, ops told", async () => {
    const { order } = await deliveredOrder("cus_exc_unbooked");
    const orderId = order.id;
    const stockBefore = await h.stockOf("EXC-1XL");
    const slackBefore = h.slack.bodies.length;
    const created = await api(`/api/orders/${orderId}/returns`, {
      body: { lines: [{ sku: "EXC-1", quantity: 1, exchangeSku: "EXC-1XL" }], reason: "wrong_item" },
    });
    const { returnId } = (await created.json()) as { returnId: string };
    await h.settle(3);
    // The return label is bought; from now on EasyPost refuses every purchase.
    expect(
      (await h.db.return.findUniqueOrThrow({ where: { id: returnId } })).labelTrackingNumber,
    ).not.toBeNull();
    h.easyPost.injectFailure("shipments.buy", { kind: "server_error" }, 10_000);
    await returnDeliveredTwice(returnId);
    await h.settle(12);

    const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(exchangeParcels(returnId).filter((s) => s.postage_label)).toHaveLength(0);
    expect(row.exchangeTrackingNumber).toBeNull();
    // The new item back on the shelf, the difference back on the card, each once.
    expect(await h.stockOf("EXC-1XL")).toBe(stockBefore);
    expect(row.exchangeReleasedAt).not.toBeNull();
    expect(row.exchangeChargeStatus).toBe("refunded");
    expect(executedCharges(returnId)).toHaveLength(1);
    const refunds = await h.services.stripe.refunds.list({
      payment_intent: row.exchangeChargeIntentId ?? "-",
    });
    expect(refunds.data.map((r) => r.amount)).toEqual([500]);
    // A clear end: the exchange failed, the return is open for ops, no "on its way" e-mail.
    expect(row.status).toBe("received");
    const kinds = await timelineOf(orderId);
    expect(kinds.filter((k) => k === "exchange-released")).toHaveLength(1);
    expect(kinds.filter((k) => k === "exchange-charge-refunded")).toHaveLength(1);
    expect(kinds.filter((k) => k === "exchange-failed")).toHaveLength(1);
    expect(kinds).not.toContain("exchange-shipped");
    expect(kinds).not.toContain("return-closed");
    expect(
      h.mailsTo(/exchange .* is on its way/i).filter((m) => m.messageId?.includes(returnId)),
    ).toHaveLength(0);
    const view = (await (await api(`/api/returns/${returnId}`)).json()) as {
      status: string;
      exchange: { charge: { status: string } };
    };
    expect(view).toMatchObject({ status: "received", exchange: { charge: { status: "refunded" } } });
    // Ops are told: the exchange's own notice, and the run's failure.
    const alerts = JSON.stringify(h.slack.bodies.slice(slackBefore));
    expect(alerts).toContain("Exchange not shipped: its parcel could not be booked");
    expect(alerts).toContain("process-return");
  });

  it("EXCHANGE_SHIPS=at_once, a reject landing while Stripe answers the charge: refunded once, nothing shipped", async () => {
    await h.restartService({ EXCHANGE_SHIPS: "at_once" });
    try {
      const { order } = await deliveredOrder("cus_exc_inflight");
      const orderId = order.id;
      const stockBefore = await h.stockOf("EXC-1XL");
      const answer = gate();
      // Stripe charges, then holds its answer: the money is taken, the step has not heard yet.
      h.sandbox.injectFailure("payment_intents.create", {
        kind: "hang",
        afterProcessing: true,
        until: answer.promise,
      });
      const created = await api(`/api/orders/${orderId}/returns`, {
        body: { lines: [{ sku: "EXC-1", quantity: 1, exchangeSku: "EXC-1XL" }], reason: "wrong_item" },
      });
      const { returnId } = (await created.json()) as { returnId: string };
      await eventually("charged at Stripe", () => executedCharges(returnId).length === 1);

      const rejected = await api(`/api/returns/${returnId}/reject`, {
        body: { note: "sent the wrong size back" },
      });
      expect(rejected.status).toBe(200);
      // The cleanup ran its undos (the label handed back last) before the charge was recorded.
      await eventually("cleanup done", async () =>
        (await timelineOf(orderId)).includes("return-label-refund-requested"),
      );
      answer.open();
      await h.settle();

      const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
      expect(row.status).toBe("rejected");
      expect(row.exchangeChargeStatus).toBe("refunded");
      const refunds = await h.services.stripe.refunds.list({
        payment_intent: row.exchangeChargeIntentId ?? "-",
      });
      expect(refunds.data.map((r) => r.amount)).toEqual([500]);
      expect(executedCharges(returnId)).toHaveLength(1);
      expect(exchangeParcels(returnId)).toHaveLength(0);
      expect(await h.stockOf("EXC-1XL")).toBe(stockBefore);
      const kinds = await timelineOf(orderId);
      expect(kinds.filter((k) => k === "exchange-charge-refunded")).toHaveLength(1);
      expect(kinds).not.toContain("exchange-shipped");
    } finally {
      await h.restartService({});
    }
  });

  it("an order paid before checkout saved cards: a dearer exchange is refused, nothing recorded", async () => {
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_exc_old",
      items: [{ sku: "EXC-1", quantity: 1 }],
    });
    await h.placeOrder(orderId);
    await h.settle(2);
    await h.easyPost.advanceTracker(`order-${orderId}`, "in_transit");
    await h.easyPost.advanceTracker(`order-${orderId}`, "delivered");
    await h.settle(2);
    const refused = await api(`/api/orders/${orderId}/returns`, {
      body: { lines: [{ sku: "EXC-1", quantity: 1, exchangeSku: "EXC-1XL" }], reason: "wrong_item" },
    });
    expect(refused.status).toBe(409);
    const { error } = (await refused.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("exchange_needs_saved_card");
    expect(await h.db.return.count({ where: { orderId } })).toBe(0);
    // Nor does its customer's form offer it.
    const sig = h.services.links.sign("order", orderId);
    const form = await (await fetch(`${h.appUrl}/orders/${orderId}/return?sig=${sig}`)).text();
    expect(form).toContain("Ask for a return label");
    expect(form).not.toContain('value="EXC-1XL"');
  });
});
