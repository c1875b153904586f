import Stripe from "stripe";

/** The Stripe idempotency key of a return's one Checkout Session for its exchange's difference. */
export const exchangeCheckoutKey = (returnId: string) => `exchange-checkout-${returnId}`;

/** What the session's metadata says, so its `checkout.session.completed` finds the return. */
export const exchangeCheckoutPurpose = "exchange-difference";

export interface ExchangeCheckoutRequest {
  returnId: string;
  orderId: string;
  /** The Stripe Customer checkout saved the card to: the new card, if any, is saved there too. */
  stripeCustomerId: string | null;
  amount: number;
  currency: string;
  /** What the customer pays for, as the pay page shows it. */
  description: string;
  successUrl: string;
  cancelUrl: string;
  /** When the page stops taking payment (Stripe: 30 minutes to 24 hours after creation). */
  expiresAt: Date;
}

export interface ExchangeCheckoutView {
  id: string;
  url: string | null;
  status: "open" | "complete" | "expired";
  paid: boolean;
  paymentIntentId: string | null;
  amount: number;
  currency: string;
  returnId: string | null;
}

/** The pay page a customer is sent to when the bank wants them present for the difference. */
export interface ExchangeCheckouts {
  /** One session per return, whatever retries (key `exchange-checkout-<returnId>`). */
  create(request: ExchangeCheckoutRequest): Promise<ExchangeCheckoutView>;
  /** Stripe's current answer, never the webhook's payload. */
  retrieve(checkoutSessionId: string): Promise<ExchangeCheckoutView>;
  /** Makes an open session unpayable; answers what the session is afterwards (it may have been paid). */
  expire(checkoutSessionId: string): Promise<ExchangeCheckoutView>;
}

function toView(session: Stripe.Checkout.Session): ExchangeCheckoutView {
  const intent = session.payment_intent;
  const status = session.status;
  return {
    id: session.id,
    url: session.url ?? null,
    // Stripe's SDK types allow statuses it may add later: anything else is not payable through us.
    status: status === "complete" ? "complete" : status === "expired" ? "expired" : "open",
    paid: session.payment_status === "paid",
    paymentIntentId: typeof intent === "string" ? intent : (intent?.id ?? null),
    amount: session.amount_total ?? 0,
    currency: session.currency ?? "",
    returnId:
      session.metadata?.purpose === exchangeCheckoutPurpose ? (session.metadata.returnId ?? null) : null,
  };
}

/**
 * Stripe Checkout (mode payment) for a dearer exchange's difference when the off-session charge was
 * refused with authentication_required: Stripe's hosted page does the authentication, no Stripe.js
 * of ours. No `client_reference_id`: the order intake reads that as an order's checkout, this
 * session pays for a return (its metadata names it). Captured at once, like the off-session charge.
 */
export function createExchangeCheckouts(stripe: Stripe): ExchangeCheckouts {
  return {
    async create(request) {
      const metadata = {
        orderId: request.orderId,
        returnId: request.returnId,
        purpose: exchangeCheckoutPurpose,
      };
      const session = await stripe.checkout.sessions.create(
        {
          mode: "payment",
          line_items: [
            {
              price_data: {
                currency: request.currency.toLowerCase(),
                unit_amount: request.amount,
                product_data: { name: request.description },
              },
              quantity: 1,
            },
          ],
          ...(request.stripeCustomerId ? { customer: request.stripeCustomerId } : {}),
          metadata,
          payment_intent_data: { capture_method: "automatic", metadata },
          success_url: request.successUrl,
          cancel_url: request.cancelUrl,
          expires_at: Math.floor(request.expiresAt.getTime() / 1000),
        },
        { idempotencyKey: exchangeCheckoutKey(request.returnId) },
      );
      return toView(session);
    },

    async retrieve(checkoutSessionId) {
      return toView(await stripe.checkout.sessions.retrieve(checkoutSessionId));
    },

    async expire(checkoutSessionId) {
      const session = await stripe.checkout.sessions.retrieve(checkoutSessionId);
      if (session.status !== "open") return toView(session);
      try {
        return toView(await stripe.checkout.sessions.expire(checkoutSessionId));
      } catch (error) {
        // Paid (or expired) between the look and the expiry: Stripe's answer now says which.
        if (error instanceof Stripe.errors.StripeInvalidRequestError)
          return toView(await stripe.checkout.sessions.retrieve(checkoutSessionId));
        throw error;
      }
    },
  };
}
