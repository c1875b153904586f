import { AppError } from "../../errors";
import type { InventoryRepository } from "../../inventory/inventory";
import type { Logger } from "../../logger";
import type { CheckoutSessions } from "../../payments/stripe-checkout";
import type { CheckoutRepository } from "./checkout-repository";
import type { CheckoutRequest } from "./checkout-request";

export interface CheckoutResult {
  orderId: string;
  checkoutSessionId: string;
  checkoutUrl: string;
}

export interface CheckoutService {
  checkout(request: CheckoutRequest): Promise<CheckoutResult>;
}

/**
 * Prices, names and currency come from our catalog, never from the client. Stock is checked,
 * not reserved: the fulfilment run reserves it once the money is authorized.
 */
export function createCheckoutService(deps: {
  inventory: InventoryRepository;
  orders: CheckoutRepository;
  sessions: CheckoutSessions;
  /** Where Stripe sends the customer back, e.g. https://shop.example */
  publicUrl: string;
  /** Signed return links (src/pages/links.ts); without them, unsigned ones under publicUrl. */
  links?: { checkoutSuccess(): string; checkoutCancelled(orderId: string): string };
  logger: Logger;
}): CheckoutService {
  const logger = deps.logger.child({ component: "checkout" });
  return {
    async checkout(request) {
      const products = new Map(
        (await deps.inventory.findProducts(request.items.map((i) => i.sku))).map((p) => [p.sku, p]),
      );
      const unknown: string[] = [];
      const lines = request.items.flatMap((item) => {
        const product = products.get(item.sku);
        if (!product) {
          unknown.push(item.sku);
          return [];
        }
        return [{ ...product, quantity: item.quantity, available: product.quantityAvailable }];
      });
      if (unknown.length > 0) {
        throw new AppError("unknown_sku", `Unknown SKU: ${unknown.join(", ")}`, {
          details: { skus: unknown },
        });
      }
      const short = lines.filter((line) => line.quantity > line.available);
      if (short.length > 0) {
        throw new AppError(
          "insufficient_stock",
          `Not enough stock for ${short.map((l) => l.sku).join(", ")}`,
          {
            details: short.map((l) => ({ sku: l.sku, requested: l.quantity, available: l.available })),
          },
        );
      }
      const currencies = new Set(lines.map((line) => line.currency.toLowerCase()));
      if (currencies.size > 1) {
        throw new AppError(
          "validation_failed",
          "These products are priced in different currencies; order them separately",
        );
      }
      const currency = [...currencies][0] as string;
      const orderLines = lines.map(({ sku, name, unitPrice, quantity }) => ({
        sku,
        name,
        unitPrice,
        quantity,
      }));

      const { orderId } = await deps.orders.createPendingOrder({
        customerId: request.customerId,
        email: request.email,
        currency,
        lines: orderLines,
      });
      let session;
      try {
        session = await deps.sessions.create({
          orderId,
          customerId: request.customerId,
          email: request.email,
          currency,
          lines: orderLines,
          successUrl:
            deps.links?.checkoutSuccess() ??
            `${deps.publicUrl}/checkout/success?session_id={CHECKOUT_SESSION_ID}`,
          cancelUrl:
            deps.links?.checkoutCancelled(orderId) ??
            `${deps.publicUrl}/checkout/cancelled?order_id=${orderId}`,
        });
      } catch (error) {
        logger.error({ err: error, orderId }, "could not create a Stripe Checkout Session");
        await deps.orders.abandon(orderId, error instanceof Error ? error.message : String(error));
        throw new AppError("upstream_unavailable", "The payment provider is unavailable; please try again", {
          cause: error,
        });
      }
      await deps.orders.attachCheckoutSession(orderId, session.id);
      return { orderId, checkoutSessionId: session.id, checkoutUrl: session.url };
    },
  };
}
