import type Stripe from "stripe";
import { exchangePaidEvent } from "../events/contracts";
import type { EventPublisher } from "../events/publisher";
import type { Logger } from "../logger";
import type { IntakeResult } from "../orders/intake/stripe-intake";
import { exchangeCheckoutPurpose } from "../payments/exchange-checkout";
import type { ReturnWork } from "./return-work";

/**
 * A Checkout Session that pays a return's exchange difference, by its payload: metadata naming
 * the return and the purpose, and no `client_reference_id` (which names an order's checkout).
 * A claim only: the session is read at Stripe before anything is written.
 */
export function isExchangeCheckoutEvent(event: Stripe.Event): boolean {
  if (
    event.type !== "checkout.session.completed" &&
    event.type !== "checkout.session.async_payment_succeeded"
  )
    return false;
  const session = event.data.object;
  return (
    session.client_reference_id == null &&
    session.metadata?.purpose === exchangeCheckoutPurpose &&
    typeof session.metadata.returnId === "string"
  );
}

export interface ExchangePaymentEvents {
  owns(event: Stripe.Event): boolean;
  handle(event: Stripe.Event): Promise<IntakeResult>;
}

/**
 * The Stripe webhook's side of an exchange paid on a Checkout page: Stripe's session read (never
 * the payload), the payment recorded as the exchange's charge by a conditional update (once,
 * whatever deliveries), then shop/exchange.paid sent with the session's id as its event id, so
 * a second delivery starts nothing twice. A payment for a return whose exchange was closed
 * unpaid, or ended, is refunded instead (src/returns/work/exchange-checkout.ts).
 */
export function createExchangePaymentEvents(deps: {
  work: Pick<ReturnWork, "readExchangeCheckout" | "settleExchangeCheckout">;
  publisher: EventPublisher;
  logger: Logger;
}): ExchangePaymentEvents {
  const logger = deps.logger.child({ component: "exchange-payments" });
  return {
    owns: isExchangeCheckoutEvent,
    async handle(event) {
      const session = event.data.object as Stripe.Checkout.Session;
      const view = await deps.work.readExchangeCheckout(session.id);
      const settled = await deps.work.settleExchangeCheckout(view, null);
      if (settled.outcome !== "charged") {
        logger.info(
          {
            eventId: event.id,
            checkoutSessionId: view.id,
            returnId: view.returnId,
            outcome: settled.outcome,
          },
          "Exchange Checkout event changes nothing more",
        );
        return { outcome: settled.outcome === "refunded" ? "processed" : "ignored", announced: false };
      }
      // Sent on every delivery of a charged session (a failed send is retried by Stripe's
      // redelivery); the event id makes the engine take it once.
      await deps.publisher.publish(
        exchangePaidEvent({
          returnId: settled.returnId,
          orderId: settled.orderId,
          checkoutSessionId: view.id,
        }),
      );
      return {
        outcome: settled.first ? "processed" : "duplicate",
        orderId: settled.orderId,
        announced: settled.first,
      };
    },
  };
}
