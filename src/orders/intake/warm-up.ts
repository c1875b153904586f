import { randomBytes, randomUUID } from "node:crypto";
import Stripe from "stripe";
import { fulfilmentKey, orderPlacedEvent } from "../../events/contracts";
import { checkoutFactsOf, claimedPayment, orderKeyOf, planFor, type OrderTerms } from "./stripe-event-plan";

/**
 * The webhook's first delivery runs its pure parts (signature check, JSON parse, the event's order
 * key and claim, Stripe's session read into facts, the plan, the answer) on V8's cold tiers until
 * a few hundred deliveries have gone through: `bench:webhook`'s first round paid for it. Run them
 * here, at start-up, on a made-up event signed with a throw-away secret: nothing leaves the
 * process, nothing is read or written (no database, no Stripe, no Inngest, no log line), and
 * nothing made here can pass the real endpoint's check (the secret is random and forgotten).
 *
 * `verify` is the route's own verification (stripe-webhook-route.ts), so the code warmed is the
 * code that serves. Returns how many rounds ran.
 */
export async function warmUpFirstDelivery(
  verify: (raw: Buffer, signature: string, secret: string) => Stripe.Event,
  rounds = 300,
): Promise<number> {
  const secret = `whsec_${randomBytes(24).toString("base64url")}`;
  const orderId = randomUUID();
  const session = madeUpSession(orderId);
  // As Stripe sends it (pretty-printed) and as stripe-node reads the expanded session (JSON text).
  const payload = JSON.stringify(
    {
      id: "evt_warm_up",
      object: "event",
      type: "checkout.session.completed",
      created: Math.floor(Date.now() / 1000),
      data: { object: { ...session, payment_intent: session.payment_intent.id, line_items: undefined } },
    },
    null,
    2,
  );
  const sessionText = JSON.stringify(session);
  const terms: OrderTerms = { orderId, total: 1200, currency: "usd" };
  let planned = 0;
  for (let round = 0; round < rounds; round++) {
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
    const event = verify(Buffer.from(payload), signature, secret);
    orderKeyOf(event);
    const claim = claimedPayment(event);
    const facts = checkoutFactsOf(JSON.parse(sessionText) as Stripe.Checkout.Session);
    const plan = await planFor(event, () => Promise.resolve(facts), terms);
    if (claim && plan.kind === "transition") planned += 1;
    const placed = orderPlacedEvent({
      orderId,
      customerId: "cus_warm_up",
      email: "warm-up@example.invalid",
      total: 1200,
      currency: "usd",
      paymentIntentId: plan.kind === "transition" ? plan.paymentIntentId : null,
      fulfilmentKey: fulfilmentKey(orderId),
    });
    JSON.stringify([placed]);
    JSON.stringify({ received: true, outcome: "processed", orderId, announced: true });
  }
  // A made-up event the intake would not place means the warm-up ran another path than the
  // deliveries will: say so in the tests rather than warm the wrong code.
  if (planned !== rounds) throw new Error(`webhook warm-up planned ${planned} of ${rounds} rounds`);
  return rounds;
}

/** A completed, manually captured session of one line, expanded as the intake retrieves it. */
function madeUpSession(orderId: string) {
  const paymentIntent = {
    id: "pi_warm_up",
    object: "payment_intent",
    status: "requires_capture",
    amount: 1200,
    currency: "usd",
    metadata: { orderId },
    customer: null,
    payment_method: "pm_warm_up",
    setup_future_usage: null,
  };
  return {
    id: "cs_warm_up",
    object: "checkout.session",
    mode: "payment",
    status: "complete",
    payment_status: "unpaid",
    client_reference_id: orderId,
    metadata: { orderId },
    amount_subtotal: 1200,
    amount_total: 1200,
    currency: "usd",
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    shipping_cost: null,
    collected_information: {
      shipping_details: {
        name: "Warm Up",
        address: {
          line1: "1 Warm St",
          line2: null,
          city: "Springfield",
          state: "IL",
          postal_code: "62701",
          country: "US",
        },
      },
    },
    customer_details: { email: "warm-up@example.invalid", phone: null },
    payment_intent: paymentIntent,
    line_items: {
      object: "list",
      has_more: false,
      data: [
        {
          id: "li_warm_up",
          object: "item",
          quantity: 1,
          amount_subtotal: 1200,
          amount_discount: 0,
          amount_tax: 0,
          amount_total: 1200,
          price: {
            id: "price_warm_up",
            object: "price",
            product: { id: "prod_warm_up", metadata: { sku: "WARM-UP" } },
          },
        },
      ],
    },
  };
}
