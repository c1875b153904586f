import { defined } from "../defined";
import type Stripe from "stripe";

/**
 * Stripe's refunds as the refund and intake modules use them, in memory: `refunds.create` under an
 * idempotency key (the same key answers the same refund), refusing as Stripe does
 * (`charge_disputed`, `charge_already_refunded`, `amount_too_large`, each a StripeInvalidRequestError);
 * `refunds.list`, `paymentIntents.retrieve` with its latest charge (whose `amount_refunded` counts a
 * partial capture's released remainder, as Stripe's does), `charges.retrieve`.
 */

export interface FakeIntent {
  id: string;
  chargeId: string;
  currency: string;
  /** Authorized; the charge's `amount`. */
  amount: number;
  captured: number;
  refunds: Stripe.Refund[];
  disputed: boolean;
}

export interface StripeFailure {
  type?: string;
  code?: string;
  message?: string;
}

export class MoneyStripe {
  readonly intents = new Map<string, FakeIntent>();
  /** Every create asked, with its key. */
  readonly asked: { params: Stripe.RefundCreateParams; idempotencyKey?: string }[] = [];
  private readonly byKey = new Map<string, Stripe.Refund>();
  private counter = 0;
  /** The next creates fail with these (a network error has no `type`). */
  readonly failCreates: StripeFailure[] = [];
  /** The next retrieves fail. */
  failRetrieves = 0;
  /** Called with each refund made, before create answers (a webhook that comes first). */
  onRefund?: (refund: Stripe.Refund) => Promise<void>;

  addIntent(id: string, fields: Partial<Omit<FakeIntent, "id">> = {}): FakeIntent {
    const captured = fields.captured ?? 5000;
    const intent: FakeIntent = {
      id,
      chargeId: `ch_${id}`,
      currency: "usd",
      amount: captured,
      captured,
      refunds: [],
      disputed: false,
      ...fields,
    };
    this.intents.set(id, intent);
    return intent;
  }

  refundedOf(intent: FakeIntent): number {
    return intent.refunds.filter((r) => r.status !== "failed").reduce((sum, r) => sum + r.amount, 0);
  }

  /** A refund made outside the service (the Dashboard): no key, no metadata of ours. */
  dashboardRefund(intentId: string, amount: number, status: string = "succeeded"): Stripe.Refund {
    const intent = defined(this.intents.get(intentId));
    const refund = this.refundOf(intent, amount, {}, status);
    intent.refunds.push(refund);
    return refund;
  }

  private refundOf(
    intent: FakeIntent,
    amount: number,
    metadata: Record<string, string>,
    status: string = "succeeded",
  ): Stripe.Refund {
    return {
      id: `re_${++this.counter}`,
      object: "refund",
      amount,
      currency: intent.currency,
      payment_intent: intent.id,
      charge: intent.chargeId,
      status,
      metadata,
      reason: null,
    } as unknown as Stripe.Refund;
  }

  private refuse(code: string, message: string): never {
    throw Object.assign(new Error(message), { type: "StripeInvalidRequestError", code, message });
  }

  readonly client = {
    refunds: {
      create: async (params: Stripe.RefundCreateParams, options: { idempotencyKey?: string } = {}) => {
        this.asked.push({ params, idempotencyKey: options.idempotencyKey });
        const failure = this.failCreates.shift();
        // As stripe-node's errors: `type`, `code` and `message` as Stripe sent them.
        if (failure) throw { ...failure };
        const key = options.idempotencyKey;
        const earlier = key ? this.byKey.get(key) : undefined;
        if (earlier) return earlier;
        const intent = this.intents.get(params.payment_intent as string);
        if (!intent) return this.refuse("resource_missing", "No such payment_intent");
        if (intent.disputed)
          return this.refuse("charge_disputed", `Charge ${intent.chargeId} has been disputed`);
        const left = intent.captured - this.refundedOf(intent);
        if (left <= 0)
          return this.refuse(
            "charge_already_refunded",
            `Charge ${intent.chargeId} has already been refunded`,
          );
        const amount = params.amount ?? left;
        if (amount > left) {
          return this.refuse(
            "amount_too_large",
            `Refund amount (${amount}) is greater than unrefunded amount (${left})`,
          );
        }
        const refund = this.refundOf(intent, amount, (params.metadata ?? {}) as Record<string, string>);
        intent.refunds.push(refund);
        if (key) this.byKey.set(key, refund);
        await this.onRefund?.(refund);
        return refund;
      },
      list: async (params: { payment_intent: string }) => ({
        data: [...(this.intents.get(params.payment_intent)?.refunds ?? [])].reverse(),
      }),
    },
    paymentIntents: {
      retrieve: async (id: string, params: { expand?: string[] } = {}) => {
        if (this.failRetrieves > 0) {
          this.failRetrieves -= 1;
          throw Object.assign(new Error("Stripe is down"), { type: "StripeConnectionError" });
        }
        const intent = this.intents.get(id);
        if (!intent) return this.refuse("resource_missing", `No such payment_intent: ${id}`);
        return {
          id,
          object: "payment_intent",
          currency: intent.currency,
          // Stripe sends the charge's id unless asked to expand it.
          latest_charge: !params.expand?.includes("latest_charge")
            ? intent.chargeId
            : {
                id: intent.chargeId,
                object: "charge",
                amount: intent.amount,
                amount_captured: intent.captured,
                // Stripe counts a partial capture's released remainder as refunded.
                amount_refunded: this.refundedOf(intent) + (intent.amount - intent.captured),
                captured: intent.captured > 0,
              },
        };
      },
    },
    charges: {
      retrieve: async (id: string) => {
        const intent = [...this.intents.values()].find((each) => each.chargeId === id);
        return { id, object: "charge", payment_intent: intent?.id ?? null };
      },
    },
  };

  asStripe(): Stripe {
    return this.client as unknown as Stripe;
  }
}
