import { createStockHolds } from "../../src/inventory/stock-holds";
import { defined } from "../support/defined";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(90_000);

/**
 * Partial fulfilment through the whole service: a paid order one of whose lines finds no stock
 * (its hold was lost, so the run reserves afresh), under each PARTIAL_FULFILMENT policy. What was
 * captured (the Stripe stand-in's PaymentIntent and charge), refunded, e-mailed and moved in stock
 * and its ledger, that a repeat changes nothing, and that the day's reconciliation finds the
 * partly captured order correct.
 */

/** The shop day the Stripe stand-in's clock is in (the reconciliation's default zone is UTC). */
function sandboxDay(h: WorkflowHarness): string {
  return new Date(h.sandbox.clock().now).toISOString().slice(0, 10);
}

async function chargeOf(h: WorkflowHarness, paymentIntentId: string) {
  const intent = await h.services.stripe.paymentIntents.retrieve(paymentIntentId, {
    expand: ["latest_charge"],
  });
  const charge = intent.latest_charge;
  if (typeof charge !== "object" || charge === null) throw new Error("no charge");
  return { intent, charge };
}

async function reconciledMismatchesOf(h: WorkflowHarness, orderId: string) {
  const report = await h.services.reconciliation.run({ date: sandboxDay(h), by: "cli" });
  return report.mismatches.filter((mismatch) => mismatch.orderId === orderId);
}

async function movementsOf(h: WorkflowHarness, orderId: string) {
  const movements = await h.db.stockMovement.findMany({ where: { orderId }, orderBy: { id: "asc" } });
  return movements.map(({ sku, delta, reason }) => ({ sku, delta, reason }));
}

describe("partial fulfilment, PARTIAL_FULFILMENT=ship_available", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { PARTIAL_FULFILMENT: "ship_available" } });
  });
  afterAll(() => h.close());

  it("ships the reserved lines, captures only their price (the rest of the hold released) and e-mails the short line once", async () => {
    await h.addProduct("PART-MUG", 5, 2500);
    await h.addProduct("PART-CAP", 0, 1000);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_part_manual",
      items: [
        { sku: "PART-MUG", quantity: 2 },
        { sku: "PART-CAP", quantity: 1 },
      ],
    });

    const eventId = await h.placeOrder(orderId);
    await h.settle();

    const [run] = await h.runsOfEvent(eventId);
    expect(run?.status).toBe("Running"); // shipped, waiting for the delivery
    const order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.total).toBe(6000);

    // Stripe: 5000 of the 6000 authorized captured, the other 1000 released with the capture.
    const capture = h.stripeCalls("payment_intents.capture");
    expect(capture.filter((call) => call.idempotencyKey === `capture-${orderId}`)).toHaveLength(1);
    const { intent, charge } = await chargeOf(h, paymentIntentId);
    expect(intent).toMatchObject({ status: "succeeded", amount: 6000, amount_received: 5000 });
    expect(charge).toMatchObject({
      amount: 6000,
      amount_captured: 5000,
      amount_refunded: 1000,
      refunded: false,
    });
    expect(h.stripeCalls("refunds.create")).toHaveLength(0);
    expect(defined(order.payment)).toMatchObject({
      status: "captured",
      amountAuthorized: 6000,
      amountCaptured: 5000,
      amountRefunded: 0,
    });

    // Stock: the mugs reserved and gone, the cap short and recorded as such on its line.
    expect(await h.stockOf("PART-MUG")).toBe(3);
    expect(await h.stockOf("PART-CAP")).toBe(0);
    expect(order.reservations.map(({ sku, quantity, status }) => ({ sku, quantity, status }))).toEqual([
      { sku: "PART-MUG", quantity: 2, status: "reserved" },
    ]);
    expect(await movementsOf(h, orderId)).toEqual([{ sku: "PART-MUG", delta: -2, reason: "reserved" }]);
    const lines = await h.db.orderLine.findMany({ where: { orderId }, orderBy: { sku: "asc" } });
    expect(lines.map(({ sku, quantity, shortQuantity }) => ({ sku, quantity, shortQuantity }))).toEqual([
      { sku: "PART-CAP", quantity: 1, shortQuantity: 1 },
      { sku: "PART-MUG", quantity: 2, shortQuantity: 0 },
    ]);

    // The admin API's order shows the short line.
    const res = await fetch(`${h.appUrl}/api/orders/${orderId}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(res.status).toBe(200);
    const details = (await res.json()) as { lines: { sku: string; shortQuantity: number }[] };
    expect(details.lines.map(({ sku, shortQuantity }) => ({ sku, shortQuantity }))).toEqual([
      { sku: "PART-CAP", shortQuantity: 1 },
      { sku: "PART-MUG", shortQuantity: 0 },
    ]);

    // The customer's order page says which line is not shipped nor charged.
    const page = await fetch(h.services.links.order(orderId).replace("http://shop.test", h.appUrl));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("1 not available: not shipped, not charged");

    // Ops re-sending the e-mail renders it again from the records: the same short line.
    const noticeRow = defined(
      order.emails.find((email) => email.idempotencyKey === `short-lines-${orderId}`),
    );
    const resent = await fetch(`${h.appUrl}/api/orders/${orderId}/emails/${noticeRow.id}/resend`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(resent.status).toBe(201);
    const resentMail = h.smtp.accepted.filter(
      (mail) => mail.messageId === `<short-lines-${orderId}-resend-1@shop.example>`,
    );
    expect(resentMail).toHaveLength(1);
    expect(resentMail[0]?.text).toContain("1 × Product PART-CAP  $10.00");
    expect(resentMail[0]?.text).toContain("You have not been charged for them");

    // The parcel carries only the mugs: two at the default 16 oz, not the cap's 16 more.
    const parcels = h.easyPost.purchased().filter((shipment) => shipment.reference === `order-${orderId}`);
    expect(parcels).toHaveLength(1);
    expect(parcels[0]?.parcel.weight).toBe(32);

    // One e-mail names the short line and what was not charged; the tracking e-mail follows.
    const notices = h.smtp.accepted.filter(
      (mail) => mail.messageId === `<short-lines-${orderId}@shop.example>`,
    );
    expect(notices).toHaveLength(1);
    expect(notices[0]?.subject).toMatch(/is not available/);
    expect(notices[0]?.text).toContain("1 × Product PART-CAP  $10.00");
    expect(notices[0]?.text).toContain("You have not been charged for them");
    expect(notices[0]?.text).toContain("2 × Product PART-MUG");
    expect(
      h.smtp.accepted.filter((mail) => mail.messageId === `<shipped-${orderId}@shop.example>`),
    ).toHaveLength(1);
    const kinds = order.timeline.map((entry) => entry.kind);
    expect(kinds).toEqual(
      expect.arrayContaining(["lines-short", "short-lines-not-charged", "short-lines-notice-sent"]),
    );
    expect(kinds).not.toContain("cancelled-out-of-stock");

    // A repeat changes nothing: the same event again starts no second run, and the reservation
    // asked again reports the same short line without taking stock.
    await h.placeOrder(orderId);
    await h.settle();
    const again = await h.services.workflow.inventory.reserve(
      orderId,
      [
        { sku: "PART-CAP", quantity: 1 },
        { sku: "PART-MUG", quantity: 2 },
      ],
      undefined,
      { allowShort: true },
    );
    expect(again).toEqual({
      ok: true,
      reserved: [{ sku: "PART-MUG", quantity: 2 }],
      short: [{ sku: "PART-CAP", requested: 1, short: 1, amount: 1000 }],
    });
    expect(await h.stockOf("PART-MUG")).toBe(3);
    expect(await movementsOf(h, orderId)).toHaveLength(1);
    expect(h.stripeCalls("payment_intents.capture").length).toBe(capture.length);
    expect(
      h.smtp.accepted.filter((mail) => mail.messageId === `<short-lines-${orderId}@shop.example>`),
    ).toHaveLength(1);

    // The books: Stripe's charge of 5000 is what we recorded; no difference for this order.
    expect(await reconciledMismatchesOf(h, orderId)).toEqual([]);
  });

  it("refunds the short line once when the money was taken whole already (automatic capture)", async () => {
    await h.addProduct("PART-BAG", 2, 2500);
    await h.addProduct("PART-PIN", 1, 1000);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_part_auto",
      items: [
        { sku: "PART-BAG", quantity: 1 },
        { sku: "PART-PIN", quantity: 2 },
      ],
      outcome: "paid",
    });

    await h.placeOrder(orderId);
    await h.settle();

    const order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    // One of the two pins was on hand: it ships, the other is refunded.
    expect(order.reservations.map(({ sku, quantity }) => ({ sku, quantity }))).toEqual([
      { sku: "PART-BAG", quantity: 1 },
      { sku: "PART-PIN", quantity: 1 },
    ]);
    expect(await h.stockOf("PART-PIN")).toBe(0);
    const refunds = h
      .stripeCalls("refunds.create")
      .filter((r) => r.idempotencyKey === `refund-short-${orderId}`);
    expect(refunds).toHaveLength(1);
    const { intent, charge } = await chargeOf(h, paymentIntentId);
    expect(intent).toMatchObject({ status: "succeeded", amount_received: 4500 });
    expect(charge).toMatchObject({ amount_captured: 4500, amount_refunded: 1000, refunded: false });
    expect(defined(order.payment)).toMatchObject({
      status: "captured",
      amountCaptured: 4500,
      amountRefunded: 1000,
    });

    const notices = h.smtp.accepted.filter(
      (mail) => mail.messageId === `<short-lines-${orderId}@shop.example>`,
    );
    expect(notices).toHaveLength(1);
    expect(notices[0]?.text).toContain("1 × Product PART-PIN  $10.00");
    expect(notices[0]?.text).toContain("We have refunded $10.00");
    expect(order.timeline.map((entry) => entry.kind)).toContain("short-lines-refunded");

    // Stripe's refund of 1000 is the fulfilment's own, recorded with its id: no difference.
    expect(await reconciledMismatchesOf(h, orderId)).toEqual([]);
  });

  it("a cancel after the partial capture refunds exactly what was captured and puts back exactly what was reserved", async () => {
    await h.addProduct("PART-LAMP", 3, 2500);
    await h.addProduct("PART-BULB", 0, 1000);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_part_cancel",
      items: [
        { sku: "PART-LAMP", quantity: 1 },
        { sku: "PART-BULB", quantity: 1 },
      ],
    });
    const admin = (path: string, body: object) =>
      fetch(`${h.appUrl}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    // Ops hold it before its label: the run captures, tells the customer, then waits at the hold.
    expect((await admin(`/api/orders/${orderId}/hold`, { reason: "other" })).status).toBe(200);
    const eventId = await h.placeOrder(orderId);
    await h.settle();
    expect(h.sandbox.paymentIntent(paymentIntentId)).toMatchObject({
      status: "succeeded",
      amount_received: 2500,
    });
    expect(await h.stockOf("PART-LAMP")).toBe(2);

    expect((await admin(`/api/orders/${orderId}/cancel`, { reason: "changed my mind" })).status).toBe(202);
    await h.settle();

    expect((await h.runsOfEvent(eventId))[0]?.status).toBe("Cancelled");
    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(order.shipment).toBeNull();
    // Refunded: the 2500 captured, once; the 1000 released at the capture is not refunded again.
    const refunds = h.stripeCalls("refunds.create").filter((r) => r.idempotencyKey === `refund-${orderId}`);
    expect(refunds.filter((r) => r.status === 200 && !r.replayed)).toHaveLength(1);
    const { intent, charge } = await chargeOf(h, paymentIntentId);
    expect(intent.amount_received).toBe(2500);
    expect(charge).toMatchObject({
      amount: 3500,
      amount_captured: 2500,
      amount_refunded: 3500,
      refunded: true,
    });
    expect(defined(order.payment)).toMatchObject({
      status: "refunded",
      amountCaptured: 2500,
      amountRefunded: 2500,
    });
    // Stock: the one lamp reserved comes back; the bulb never moved.
    expect(await h.stockOf("PART-LAMP")).toBe(3);
    expect(await movementsOf(h, orderId)).toEqual([
      { sku: "PART-LAMP", delta: -1, reason: "reserved" },
      { sku: "PART-LAMP", delta: 1, reason: "released" },
    ]);
    const mails = h.smtp.accepted.filter((mail) => mail.messageId?.includes(orderId));
    expect(mails.map((mail) => mail.messageId)).toEqual([
      `<short-lines-${orderId}@shop.example>`,
      `<cancelled-${orderId}@shop.example>`,
    ]);
    expect(await reconciledMismatchesOf(h, orderId)).toEqual([]);
  });

  it("an order placed through checkout whose hold was lost and whose stock was then counted short ships the rest", async () => {
    await h.addProduct("KIT-LAMP", 2, 2500);
    await h.addProduct("KIT-SHADE", 1, 1000);
    const { orderId, paymentIntentId } = await h.checkoutPaidOrder({
      customerId: "cus_part_checkout",
      items: [
        { sku: "KIT-LAMP", quantity: 1 },
        { sku: "KIT-SHADE", quantity: 1 },
      ],
    });
    // The hold is lost (released as a stale one would be), and the shade is then counted at 0.
    await createStockHolds(h.db).release(orderId, "released while paid, in a test");
    const counted = await fetch(`${h.appUrl}/api/admin/products/KIT-SHADE/stock`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ count: 0, reason: "counted" }),
    });
    expect(counted.status).toBeLessThan(300);

    await h.placeOrder(orderId);
    await h.settle();

    const order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.reservations.map(({ sku, quantity }) => ({ sku, quantity }))).toEqual([
      { sku: "KIT-LAMP", quantity: 1 },
    ]);
    expect(h.sandbox.paymentIntent(paymentIntentId)).toMatchObject({ amount: 3500, amount_received: 2500 });
    expect(await h.stockOf("KIT-LAMP")).toBe(1);
    const notices = h.smtp.accepted.filter(
      (mail) => mail.messageId === `<short-lines-${orderId}@shop.example>`,
    );
    expect(notices).toHaveLength(1);
    expect(notices[0]?.text).toContain("1 × Product KIT-SHADE  $10.00");
    // The ledger balances (hold, release, count, reservation are all movements) and the capture matches.
    expect(await reconciledMismatchesOf(h, orderId)).toEqual([]);
    const report = await h.services.reconciliation.run({ date: sandboxDay(h), by: "cli" });
    expect(
      report.mismatches.filter((m) => m.kind === "stock_ledger_differs" && m.reference.startsWith("KIT-")),
    ).toEqual([]);
  });

  it("units that never shipped cannot be returned: a return counts the line less its short units", async () => {
    await h.addProduct("PART-BOWL", 1, 1500);
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_part_return",
      items: [{ sku: "PART-BOWL", quantity: 3 }],
    });
    await h.placeOrder(orderId);
    await h.settle();
    const line = await h.db.orderLine.findFirstOrThrow({ where: { orderId, sku: "PART-BOWL" } });
    expect(line.shortQuantity).toBe(2);
    await h.easyPost.advanceTracker(`order-${orderId}`, "in_transit");
    await h.easyPost.advanceTracker(`order-${orderId}`, "delivered");
    await h.settle(2);
    expect((await h.order(orderId)).status).toBe("delivered");

    const ask = (quantity: number) =>
      fetch(`${h.appUrl}/api/orders/${orderId}/returns`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ lines: [{ sku: "PART-BOWL", quantity }], reason: "no_longer_needed" }),
      });
    const tooMany = await ask(2);
    expect(tooMany.status).toBe(400);
    const { error } = (await tooMany.json()) as { error: { code: string; details?: unknown } };
    expect(error.code).toBe("return_quantity_exceeded");
    expect(await h.db.return.count({ where: { orderId } })).toBe(0);
    expect((await ask(1)).status).toBe(201);
  });

  it("cancels as today when no line can be reserved at all", async () => {
    await h.addProduct("PART-NONE-1", 0);
    await h.addProduct("PART-NONE-2", 0);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_part_none",
      items: [
        { sku: "PART-NONE-1", quantity: 1 },
        { sku: "PART-NONE-2", quantity: 1 },
      ],
    });

    await h.placeOrder(orderId);
    await h.settle();

    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled_out_of_stock");
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("canceled");
    expect(h.mailsTo(/could not fulfil/).filter((mail) => mail.text?.includes("PART-NONE"))).toHaveLength(1);
    expect(
      h.smtp.accepted.filter((mail) => mail.messageId === `<short-lines-${orderId}@shop.example>`),
    ).toHaveLength(0);
    expect(await h.db.orderLine.count({ where: { orderId, shortQuantity: { gt: 0 } } })).toBe(0);
  });
});

describe("partial fulfilment, PARTIAL_FULFILMENT=cancel_order (the default)", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
  });
  afterAll(() => h.close());

  it("cancels the whole order when one line is short: nothing captured, stock put back, one out-of-stock e-mail", async () => {
    await h.addProduct("WHOLE-MUG", 5, 2500);
    await h.addProduct("WHOLE-CAP", 0, 1000);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_whole",
      items: [
        { sku: "WHOLE-MUG", quantity: 2 },
        { sku: "WHOLE-CAP", quantity: 1 },
      ],
    });

    const eventId = await h.placeOrder(orderId);
    await h.settle();

    const [run] = await h.runsOfEvent(eventId);
    expect(run).toMatchObject({
      status: "Completed",
      output: { orderId, outcome: "cancelled_out_of_stock" },
    });
    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled_out_of_stock");
    const { intent } = await chargeOf(h, paymentIntentId);
    expect(intent).toMatchObject({ status: "canceled", amount_received: 0 });
    expect(h.stripeCalls("payment_intents.capture")).toHaveLength(0);
    expect(h.stripeCalls("refunds.create")).toHaveLength(0);
    expect(await h.stockOf("WHOLE-MUG")).toBe(5);
    expect(await movementsOf(h, orderId)).toEqual([]);
    expect(order.reservations).toEqual([]);
    const mails = h.smtp.accepted.filter(
      (mail) => mail.messageId === `<out-of-stock-${orderId}@shop.example>`,
    );
    expect(mails).toHaveLength(1);
    expect(mails[0]?.text).toContain("Product WHOLE-CAP sold out");
    expect(
      h.smtp.accepted.filter((mail) => mail.messageId === `<short-lines-${orderId}@shop.example>`),
    ).toHaveLength(0);
    expect(await h.db.orderLine.count({ where: { orderId, shortQuantity: { gt: 0 } } })).toBe(0);
  });
});
