import type Stripe from "stripe";
import type { createStripeSandbox } from "../../src/dev/stripe-sandbox";

/**
 * One order's Checkout Session created and paid (authorized) on the Stripe stand-in, its webhooks
 * kept back: the benchmarks deliver the events themselves, as Stripe would.
 */
export async function authorizedCheckoutEvents(
  stripe: Stripe,
  sandbox: ReturnType<typeof createStripeSandbox>,
  orderId: string,
): Promise<{ checkoutSessionId: string; events: Stripe.Event[] }> {
  const session = await stripe.checkout.sessions.create({
    mode: "payment",
    line_items: [
      {
        price_data: { currency: "usd", unit_amount: 1200, product_data: { name: "Logo mug" } },
        quantity: 1,
      },
    ],
    client_reference_id: orderId,
    customer_email: "bench@example.com",
    metadata: { orderId, customerId: "cus-bench" },
    payment_intent_data: { capture_method: "manual", metadata: { orderId, customerId: "cus-bench" } },
    success_url: "http://shop.bench/ok",
  });
  const { events } = await sandbox.completeCheckoutSession(session.id, "authorized", { deliver: false });
  return { checkoutSessionId: session.id, events };
}
