import type Stripe from "stripe";
import type { OutgoingEvent } from "../../src/events/publisher";
import { createExchangeCheckouts } from "../../src/payments/exchange-checkout";
import {
  createExchangePaymentEvents,
  isExchangeCheckoutEvent,
} from "../../src/returns/exchange-payment-events";
import type { ReturnRow } from "../../src/returns/return-records";
import { createExchangeCheckoutWork } from "../../src/returns/work/exchange-checkout";
import { captureLog } from "../support/log-capture";
import { withCheckoutRecords } from "../support/fakes/checkout-records";
import { CheckoutStripe } from "../support/fakes/checkout-stripe";
import { returnStepsWorld } from "../support/fakes/return-steps";

/**
 * The Stripe webhook's side of an exchange paid on a Checkout page
 * (src/returns/exchange-payment-events.ts): which events are its, Stripe's session read and settled
 * on the return through the real work over in-memory records and Stripe, and shop/exchange.paid
 * sent under the session's id. The fast tier of the `exchanges-fast` mutation group;
 * test/workflow/exchange-charge.test.ts stays the end-to-end check through the webhook.
 */

const dearer: ReturnRow["lines"] = [
  { sku: "MUG", quantity: 1, unitPrice: 3000, exchangeSku: "MUG-XL", exchangeUnitPrice: 3700 },
];

const event = (
  type: string,
  session: Partial<Stripe.Checkout.Session> & Record<string, unknown>,
  id = "evt_1",
): Stripe.Event =>
  ({ id, type, data: { object: { object: "checkout.session", ...session } } }) as unknown as Stripe.Event;

async function setup(chargeStatus: ReturnRow["exchange_charge_status"] = "awaiting_payment") {
  const t = returnStepsWorld({
    row: { lines: dearer, exchange_charge_status: chargeStatus, exchange_charge_amount: 700 },
  });
  withCheckoutRecords(t.records);
  const stripe = new CheckoutStripe();
  t.ctx.deps.checkouts = { sessions: createExchangeCheckouts(stripe.asStripe()), windowMs: 3_600_000 };
  const work = createExchangeCheckoutWork(t.ctx);
  const { checkoutSessionId } = await work.createExchangeCheckout(t.returnId);
  t.records.writes.length = 0;
  const published: OutgoingEvent[] = [];
  const log = captureLog();
  const events = createExchangePaymentEvents({
    work,
    publisher: { publish: async (sent) => void published.push(sent) },
    logger: log.logger,
  });
  // What the webhook's payload says; the handler reads Stripe's session, never this.
  const completed = event("checkout.session.completed", {
    id: checkoutSessionId,
    client_reference_id: null,
    metadata: { returnId: t.returnId, purpose: "exchange-difference" },
  });
  return { ...t, stripe, sessionId: checkoutSessionId, published, log, events, completed };
}

describe("which Stripe events pay an exchange (isExchangeCheckoutEvent)", () => {
  const ours = { client_reference_id: null, metadata: { returnId: "ret_1", purpose: "exchange-difference" } };

  it("a completed or async-paid Checkout Session naming a return and the exchange's purpose", () => {
    expect(isExchangeCheckoutEvent(event("checkout.session.completed", ours))).toBe(true);
    expect(isExchangeCheckoutEvent(event("checkout.session.async_payment_succeeded", ours))).toBe(true);
    // A payload without client_reference_id at all is Stripe's null left out.
    expect(isExchangeCheckoutEvent(event("checkout.session.completed", { metadata: ours.metadata }))).toBe(
      true,
    );
  });

  it("not an order's checkout, another purpose, no return, or another event", () => {
    for (const [type, session] of [
      ["checkout.session.completed", { ...ours, client_reference_id: "ord_1" }],
      ["checkout.session.completed", { ...ours, metadata: { returnId: "ret_1", purpose: "order" } }],
      ["checkout.session.completed", { ...ours, metadata: { purpose: "exchange-difference" } }],
      ["checkout.session.completed", { ...ours, metadata: { returnId: 7, purpose: "exchange-difference" } }],
      ["checkout.session.completed", { ...ours, metadata: null }],
      ["checkout.session.expired", ours],
      ["checkout.session.async_payment_failed", ours],
      ["payment_intent.succeeded", ours],
    ] as const)
      expect(isExchangeCheckoutEvent(event(type, session as never))).toBe(false);
  });

  it("is what the handler owns", async () => {
    const t = await setup();
    expect(t.events.owns(t.completed)).toBe(true);
    expect(t.events.owns(event("checkout.session.expired", ours))).toBe(false);
  });
});

describe("an exchange paid on its page (createExchangePaymentEvents)", () => {
  it("the first delivery records the charge and starts the exchange's shipping once", async () => {
    const t = await setup();
    t.stripe.pay(t.sessionId);
    await expect(t.events.handle(t.completed)).resolves.toEqual({
      outcome: "processed",
      orderId: t.order.id,
      announced: true,
    });
    expect(t.records.row).toMatchObject({
      exchange_charge_status: "charged",
      exchange_charge_intent_id: `pi_${t.sessionId}`,
    });
    expect(t.published).toEqual([
      {
        name: "shop/exchange.paid",
        id: `exchange-paid-${t.sessionId}`,
        data: { returnId: t.returnId, orderId: t.order.id, checkoutSessionId: t.sessionId },
      },
    ]);
    // Redelivered: sent again under the same id (the engine takes it once), a duplicate.
    await expect(t.events.handle({ ...t.completed, id: "evt_2" })).resolves.toEqual({
      outcome: "duplicate",
      orderId: t.order.id,
      announced: false,
    });
    expect(t.published.map((e) => e.id)).toEqual([
      `exchange-paid-${t.sessionId}`,
      `exchange-paid-${t.sessionId}`,
    ]);
    expect(t.records.writes).toEqual([`exchange-checkout-paid pi_${t.sessionId} 700`]);
  });

  it("Stripe's session decides, not the payload: an unpaid session starts nothing", async () => {
    const t = await setup();
    await expect(t.events.handle(t.completed)).resolves.toEqual({ outcome: "ignored", announced: false });
    expect(t.published).toEqual([]);
    expect(t.records.writes).toEqual([]);
    expect(t.log.lines()).toContainEqual(
      expect.objectContaining({
        component: "exchange-payments",
        eventId: "evt_1",
        checkoutSessionId: t.sessionId,
        returnId: t.returnId,
        outcome: "not-paid",
        msg: "Exchange Checkout event changes nothing more",
      }),
    );
  });

  it("paid after the exchange closed unpaid: refunded, processed, nothing started", async () => {
    const t = await setup();
    t.records.row.exchange_charge_status = "unpaid";
    t.stripe.pay(t.sessionId);
    await expect(t.events.handle(t.completed)).resolves.toEqual({ outcome: "processed", announced: false });
    expect(t.payments.refunds).toEqual([
      { paymentIntentId: `pi_${t.sessionId}`, key: `exchange-checkout-refund-${t.returnId}` },
    ]);
    expect(t.published).toEqual([]);
    expect(t.log.lines()).toContainEqual(expect.objectContaining({ outcome: "refunded" }));
  });

  it("Stripe unreachable, or the engine not taking the event: the delivery fails for Stripe to retry", async () => {
    const t = await setup();
    t.stripe.pay(t.sessionId);
    const down = createExchangePaymentEvents({
      work: createExchangeCheckoutWork(t.ctx),
      publisher: {
        publish: async () => {
          throw new Error("inngest unavailable");
        },
      },
      logger: t.log.logger,
    });
    await expect(down.handle(t.completed)).rejects.toThrow("inngest unavailable");
    // The charge is recorded; the redelivery sends the event.
    await expect(t.events.handle(t.completed)).resolves.toMatchObject({ outcome: "duplicate" });
    expect(t.published).toHaveLength(1);
  });
});
