import Stripe from "stripe";
import { defined } from "../defined";

/**
 * Stripe's Checkout Sessions (mode payment) as src/payments/exchange-checkout.ts uses them, in
 * memory, through the same `stripe.checkout.sessions` surface: `create` under an idempotency key
 * (the same key answers the same session, as Stripe's does), `retrieve`, and `expire`, which
 * Stripe refuses with a StripeInvalidRequestError for a session that is not open. A session is
 * paid (`pay`) as the customer would pay it on the hosted page. Kept apart from money-stripe.ts
 * (refunds), which other suites grow.
 */
export class CheckoutStripe {
  readonly sessions = new Map<string, Stripe.Checkout.Session>();
  /** Every create asked, with its key. */
  readonly created: { params: Stripe.Checkout.SessionCreateParams; idempotencyKey?: string }[] = [];
  /** Every expire asked. */
  readonly expired: string[] = [];
  /** Answer sessions with their PaymentIntent expanded (an object), as `expand` would. */
  expandIntent = false;
  /** Runs as an expire arrives, before Stripe looks (the customer paying in that instant). */
  beforeExpire?: (id: string) => void;
  private readonly byKey = new Map<string, string>();
  private counter = 0;

  /** The customer pays on the hosted page: complete, paid, with its PaymentIntent. */
  pay(id: string, paymentStatus: Stripe.Checkout.Session.PaymentStatus = "paid"): Stripe.Checkout.Session {
    const session = defined(this.sessions.get(id));
    if (session.status !== "open") throw new Error(`Checkout Session ${id} is ${session.status}, not open`);
    Object.assign(session, {
      status: "complete",
      payment_status: paymentStatus,
      payment_intent: `pi_${id}`,
    });
    return session;
  }

  private answer(session: Stripe.Checkout.Session): Stripe.Checkout.Session {
    const copy = structuredClone(session);
    if (this.expandIntent && typeof copy.payment_intent === "string")
      copy.payment_intent = { id: copy.payment_intent, object: "payment_intent" } as Stripe.PaymentIntent;
    return copy;
  }

  private find(id: string): Stripe.Checkout.Session {
    const session = this.sessions.get(id);
    if (!session)
      throw new Stripe.errors.StripeInvalidRequestError({
        type: "invalid_request_error",
        code: "resource_missing",
        message: `No such checkout.session: '${id}'`,
      });
    return session;
  }

  readonly client = {
    checkout: {
      sessions: {
        create: async (
          params: Stripe.Checkout.SessionCreateParams,
          options: { idempotencyKey?: string } = {},
        ) => {
          this.created.push({ params, idempotencyKey: options.idempotencyKey });
          const key = options.idempotencyKey;
          const earlier = key ? this.byKey.get(key) : undefined;
          if (earlier) return this.answer(this.find(earlier));
          const id = `cs_test_${++this.counter}`;
          const items = params.line_items ?? [];
          const session = {
            id,
            object: "checkout.session",
            mode: params.mode,
            url: `https://checkout.stripe.test/pay/${id}`,
            status: "open",
            payment_status: "unpaid",
            payment_intent: null,
            client_reference_id: params.client_reference_id ?? null,
            customer: params.customer ?? null,
            amount_total: items.reduce(
              (sum, item) => sum + (item.price_data?.unit_amount ?? 0) * (item.quantity ?? 1),
              0,
            ),
            currency: items[0]?.price_data?.currency ?? null,
            metadata: { ...(params.metadata ?? {}) },
            expires_at: params.expires_at ?? null,
          } as unknown as Stripe.Checkout.Session;
          this.sessions.set(id, session);
          if (key) this.byKey.set(key, id);
          return this.answer(session);
        },
        retrieve: async (id: string) => this.answer(this.find(id)),
        expire: async (id: string) => {
          this.expired.push(id);
          const session = this.find(id);
          this.beforeExpire?.(id);
          if (session.status !== "open")
            throw new Stripe.errors.StripeInvalidRequestError({
              type: "invalid_request_error",
              message: `Only Checkout Sessions with a status in [open] can be expired. This Checkout Session has a status of ${session.status}.`,
            });
          Object.assign(session, { status: "expired", url: null });
          return this.answer(session);
        },
      },
    },
  };

  asStripe(): Stripe {
    return this.client as unknown as Stripe;
  }
}
