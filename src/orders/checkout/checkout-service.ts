import { createHash } from "node:crypto";
import Stripe from "stripe";
import { AppError } from "../../errors";
import type { InventoryRepository, ProductView } from "../../inventory/inventory";
import { HoldOutOfStock } from "../../inventory/stock-holds";
import type { Logger } from "../../logger";
import type { CheckoutSessions, ShippingCollection } from "../../payments/stripe-checkout";
import { IdempotencyKeyTaken, type CheckoutOrder, type CheckoutRepository } from "./checkout-repository";
import type { CheckoutRequest } from "./checkout-request";
import { planParcels } from "../../shipping/parcel-plan";
import { quoteShipping, type RateTable, type ShippingQuote } from "../../shipping/rate-table";
import { pricingTermsFor, type CheckoutPricingSettings } from "./pricing-terms";
import { liveQuoted, type CheckoutServiceLiveRates } from "./live-quote";
import { minimumChargeText, shortOfMinimumCharge } from "../../payments/minimum-charge";

export interface CheckoutResult {
  orderId: string;
  checkoutSessionId: string;
  checkoutUrl: string;
}

export interface CheckoutService {
  /**
   * Answers with a payable session, or throws: 4xx for the request (among them `amount_too_small`,
   * 422: under Stripe's minimum charge), `insufficient_stock` (409),
   * `idempotency_key_reused` (422), `service_unavailable` (503: Stripe busy or down; retry with the
   * same key), or the database's own error (the HTTP layer answers 503 `database_unavailable` when
   * src/db/unavailable.ts recognises it).
   */
  checkout(request: CheckoutRequest, options?: { idempotencyKey?: string }): Promise<CheckoutResult>;
  /**
   * For the sweep: a pending order whose session never got attached (the request died, or the
   * database failed after Stripe answered). Finds the session Stripe made for it, if any (the
   * create call replays under its idempotency key), expires it there, then expires the order and
   * releases its hold. Returns what it did; throws when Stripe cannot be asked (try again later).
   */
  expireHalfMade(orderId: string): Promise<"expired" | "not-half-made">;
}

/** Nothing to ship when every product is digital (and there is at least one). */
function isDigitalOnly(products: readonly { digital?: boolean }[]): boolean {
  return products.length > 0 && products.every((product) => product.digital === true);
}

/** Stripe refused the request itself, so it created nothing: the order can be abandoned at once. */
function definitelyNotCreated(error: unknown): boolean {
  return (
    error instanceof Stripe.errors.StripeInvalidRequestError ||
    error instanceof Stripe.errors.StripeAuthenticationError ||
    error instanceof Stripe.errors.StripePermissionError
  );
}

/** Stripe refused the session as under its minimum charge: the customer's cart, not an outage. */
function refusedAsTooSmall(error: unknown): error is Stripe.errors.StripeInvalidRequestError {
  return error instanceof Stripe.errors.StripeInvalidRequestError && error.code === "amount_too_small";
}

/**
 * Refuses (422 `amount_too_small`), before anything is written, a checkout whose amount Stripe
 * checks at session creation is under the currency's minimum charge. That amount is the one the
 * session is created with (its `amount_total`): the lines' subtotal, plus the first shipping
 * option (Checkout preselects it and counts it in the total until the customer picks another).
 * Nothing else is in it at creation: tax waits for the address the page asks for (and inclusive
 * tax is inside the prices already), and codes are typed on the page (`allow_promotion_codes`),
 * never sent with the request. A code that later takes the total under the minimum is Stripe's to
 * refuse on its page; one that Stripe refuses at creation is answered the same (finish()).
 */
function checkMinimumCharge(
  currency: string,
  lines: readonly { unitPrice: number; quantity: number }[],
  shippingOptions: readonly { amount: number }[] | null,
): void {
  const subtotal = lines.reduce((sum, line) => sum + line.unitPrice * line.quantity, 0);
  const amount = subtotal + (shippingOptions?.[0]?.amount ?? 0);
  const minimum = shortOfMinimumCharge(amount, currency);
  if (minimum === null) return;
  throw new AppError(
    "amount_too_small",
    `The order total must be at least ${minimumChargeText(minimum, currency)}, the payment provider's minimum charge; add to the order`,
    { details: { minimum, currency, amount } },
  );
}

const busy = (cause: unknown, what: string) =>
  new AppError("service_unavailable", `${what}; please retry with the same Idempotency-Key`, { cause });

function requestHashOf(request: CheckoutRequest): string {
  const canonical = {
    customerId: request.customerId,
    email: request.email,
    items: [...request.items].sort((a, b) => a.sku.localeCompare(b.sku)),
    // Only when given, so the hash of every request without one is what it always was.
    ...(request.destination ? { destination: request.destination } : {}),
  };
  return createHash("sha256").update(JSON.stringify(canonical)).digest("hex");
}

export type { CheckoutServiceLiveRates } from "./live-quote";

export interface CheckoutServiceShippingRates {
  table: RateTable;
  itemWeightOz: number;
  maxWeightOz?: number | undefined;
}

/** What the session request carries of a quote (the zone is the table's business). */
const toQuoted = ({
  rateId,
  displayName,
  amount,
  currency,
  deliveryEstimate,
  carrierService,
}: ShippingQuote) => ({
  rateId,
  displayName,
  amount,
  currency,
  deliveryEstimate,
  // Only when the table names one, so options stored before keep their shape (the same request).
  ...(carrierService ? { carrierService } : {}),
});

/**
 * Prices, names and currency come from our catalog, never from the client. The order, its
 * checkout request and the stock hold commit in one transaction before Stripe is called, so a
 * failure at any point leaves either nothing, or a pending order the same key resumes and the
 * checkout sweep finishes (expiring the session Stripe made, releasing the hold).
 */
export function createCheckoutService(deps: {
  inventory: InventoryRepository;
  orders: CheckoutRepository;
  sessions: CheckoutSessions;
  /** Where Stripe sends the customer back, e.g. https://shop.example */
  publicUrl: string;
  /** Signed return links (src/pages/links.ts); without them, unsigned ones under publicUrl. */
  links?: { checkoutSuccess(): string; checkoutCancelled(orderId: string): string };
  /** How long a session can be paid, and the stock held: CHECKOUT_SESSION_TTL. */
  sessionTtlMs: number;
  logger: Logger;
  now?: () => number;
  /** Address collection for orders with something to ship. */
  shipping?: ShippingCollection;
  /**
   * Told when a checkout took products down to their low-stock threshold (the app sends
   * `shop/stock.low`; watch-low-stock alerts ops). Best effort: the daily cron is the safety net.
   */
  onLowStock?: (skus: string[], orderId: string) => Promise<void>;
  /**
   * The shop's rate table (SHIPPING_RATE_TABLE): set, an order with something to ship needs a
   * destination it covers, and its quoted rates become the session's shipping options.
   * Parcels are planned at `itemWeightOz` a unit, split at `maxWeightOz`.
   */
  shippingRates?: CheckoutServiceShippingRates;
  /**
   * Live carrier rates (CHECKOUT_LIVE_RATES): with a destination, the carrier's rates the policy
   * keeps are the shipping options; the rate table is the fallback (no destination, the carrier
   * down or rating nothing there).
   */
  liveRates?: CheckoutServiceLiveRates;
  /** Stripe Tax and discount codes (CHECKOUT_* settings, decision 0204); unset: neither. */
  pricing?: CheckoutPricingSettings;
}): CheckoutService {
  const logger = deps.logger.child({ component: "checkout" });
  const now = deps.now ?? Date.now;

  const sessionRequest = (order: CheckoutOrder) => ({
    orderId: order.orderId,
    customerId: order.customerId,
    email: order.email,
    currency: order.currency,
    lines: order.lines,
    successUrl:
      deps.links?.checkoutSuccess() ?? `${deps.publicUrl}/checkout/success?session_id={CHECKOUT_SESSION_ID}`,
    cancelUrl:
      deps.links?.checkoutCancelled(order.orderId) ??
      `${deps.publicUrl}/checkout/cancelled?order_id=${order.orderId}`,
    expiresAt: order.expiresAt,
    // Rebuilt from what was stored, never re-quoted: the same key must carry the same request.
    ...(order.shippingOptions ? { shippingOptions: order.shippingOptions } : {}),
    // Likewise the tax and code terms stored with it, never today's configuration.
    ...(order.pricingTerms ? { pricingTerms: order.pricingTerms } : {}),
  });

  /**
   * The session request, asking for an address unless every product is digital.
   * `digitalOnly`: known when the caller just priced the order; otherwise read from the catalog.
   */
  async function sessionRequestFor(order: CheckoutOrder, digitalOnly?: boolean) {
    const request = sessionRequest(order);
    if (!deps.shipping) return request;
    const nothingToShip =
      digitalOnly ?? isDigitalOnly(await deps.inventory.findProducts(order.lines.map((line) => line.sku)));
    return nothingToShip ? request : { ...request, shipping: deps.shipping };
  }

  /** Creates (or, under the same Stripe idempotency key, finds) the session and attaches it. */
  async function finish(order: CheckoutOrder, digitalOnly?: boolean): Promise<CheckoutResult> {
    let session;
    try {
      session = await deps.sessions.create(await sessionRequestFor(order, digitalOnly));
    } catch (error) {
      logger.error({ err: error, orderId: order.orderId }, "could not create a Stripe Checkout Session");
      if (definitelyNotCreated(error)) {
        await deps.orders
          .abandon(order.orderId, error instanceof Error ? error.message : String(error))
          .catch((abandonError: unknown) =>
            logger.error({ err: abandonError, orderId: order.orderId }, "abandon failed; the sweep will"),
          );
      }
      // Under Stripe's minimum though our check passed it (a currency our table lacks): the
      // customer's cart to change, not a retry; the order was abandoned just above.
      if (refusedAsTooSmall(error)) {
        throw new AppError(
          "amount_too_small",
          `The payment provider refused the order total: ${error.message}`,
          {
            cause: error,
          },
        );
      }
      // Otherwise Stripe may have made the session: the same key resumes it, or the sweep expires it.
      throw busy(error, "The payment provider is unavailable");
    }
    let attached: boolean;
    try {
      attached = await deps.orders.attachCheckoutSession(order.orderId, session.id);
    } catch (error) {
      // The session exists but our order does not point at it: nobody may pay it.
      logger.error({ err: error, orderId: order.orderId }, "could not record the Checkout Session");
      await expireQuietly(session.id, order.orderId);
      await deps.orders
        .abandon(order.orderId, "the Checkout Session could not be recorded")
        .catch((abandonError: unknown) =>
          logger.error({ err: abandonError, orderId: order.orderId }, "abandon failed; the sweep will"),
        );
      throw busy(error, "Checkout is busy");
    }
    if (!attached) {
      // Another session is on record (Stripe forgot the key after 24 hours): never leave two payable.
      await expireQuietly(session.id, order.orderId);
      throw new AppError("conflict", "This checkout is too old to repeat; start a new one");
    }
    return { orderId: order.orderId, checkoutSessionId: session.id, checkoutUrl: session.url };
  }

  async function expireQuietly(checkoutSessionId: string, orderId: string): Promise<void> {
    try {
      await deps.sessions.expire(checkoutSessionId);
    } catch (error) {
      logger.error({ err: error, orderId, checkoutSessionId }, "could not expire the Checkout Session");
    }
  }

  async function resume(order: CheckoutOrder, requestHash: string): Promise<CheckoutResult> {
    if (order.requestHash !== requestHash) {
      throw new AppError(
        "idempotency_key_reused",
        "This Idempotency-Key was used for a different checkout request; use a new key for a new request",
      );
    }
    if (order.checkoutSessionId === null && order.status !== "pending") {
      throw new AppError("conflict", "This checkout could not be completed; start a new one with a new key");
    }
    return finish(order);
  }

  /** `found`: the products as the keyed lookup read them (one statement with it); otherwise read here. */
  async function priced(request: CheckoutRequest, found?: readonly ProductView[]) {
    const products = new Map(
      (found ?? (await deps.inventory.findProducts(request.items.map((i) => i.sku)))).map((p) => [p.sku, p]),
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
      throw new AppError("unknown_sku", `Unknown SKU: ${unknown.join(", ")}`, { details: { skus: unknown } });
    }
    const archived = lines.filter((line) => line.archived).map((line) => line.sku);
    if (archived.length > 0) {
      throw new AppError("product_unavailable", `No longer on sale: ${archived.join(", ")}`, {
        details: { skus: archived },
      });
    }
    const currencies = new Set(lines.map((line) => line.currency.toLowerCase()));
    if (currencies.size > 1) {
      throw new AppError(
        "validation_failed",
        "These products are priced in different currencies; order them separately",
      );
    }
    // A cheap first look: when the shelf is visibly short, answer without taking a transaction.
    const short = lines.filter((line) => line.quantity > line.available);
    if (short.length > 0) throw outOfStock(short.map((l) => ({ ...l, requested: l.quantity })));
    return {
      currency: [...currencies][0] as string,
      digitalOnly: isDigitalOnly(lines),
      // Refuses (422) a product Stripe Tax could not classify, before anything is written.
      pricingTerms: pricingTermsFor(deps.pricing, lines),
      lines: lines
        .map(({ sku, name, unitPrice, quantity }) => ({ sku, name, unitPrice, quantity }))
        .sort((a, b) => a.sku.localeCompare(b.sku)),
    };
  }

  /**
   * The rate table's options for this order, or null when no table is set or nothing ships.
   * Refuses (422) before anything is written: no destination, or one the table does not cover.
   */
  function quoted(
    request: CheckoutRequest,
    order: { digitalOnly: boolean; lines: { sku: string; unitPrice: number; quantity: number }[] },
  ) {
    const rates = deps.shippingRates;
    if (!rates || order.digitalOnly) return null;
    if (!request.destination) {
      throw new AppError(
        "shipping_destination_required",
        "This shop charges shipping by destination: send destination { country, region?, postalCode? }",
      );
    }
    const parcels = planParcels(order.lines, {
      itemWeightOz: rates.itemWeightOz,
      maxWeightOz: rates.maxWeightOz,
    });
    const options = quoteShipping(rates.table, request.destination, {
      subtotal: order.lines.reduce((sum, line) => sum + line.unitPrice * line.quantity, 0),
      parcelWeightsOz: parcels.map((parcel) => parcel.weightOz),
    });
    if (options.length === 0) {
      throw new AppError(
        "shipping_destination_not_covered",
        `This shop does not ship to ${[request.destination.country, request.destination.region, request.destination.postalCode].filter(Boolean).join(" ")}`,
        { details: { destination: request.destination } },
      );
    }
    return options;
  }

  const outOfStock = (short: { sku: string; requested: number; available: number }[]) =>
    new AppError("insufficient_stock", `Not enough stock for ${short.map((l) => l.sku).join(", ")}`, {
      details: short.map(({ sku, requested, available }) => ({ sku, requested, available })),
    });

  async function start(request: CheckoutRequest, idempotencyKey: string | null, requestHash: string) {
    let found: ProductView[] | undefined;
    if (idempotencyKey !== null) {
      const looked = await deps.orders.findByIdempotencyKeyWithProducts(
        request.customerId,
        idempotencyKey,
        request.items.map((i) => i.sku),
      );
      if (looked.existing) return resume(looked.existing, requestHash);
      found = looked.products;
    }
    const { currency, lines, digitalOnly, pricingTerms } = await priced(request, found);
    // Live carrier rates first when on (decision 0203); null: the rate table's, as before.
    const shippingOptions =
      (await liveQuoted(deps.liveRates, { logger, hasTable: !!deps.shippingRates }, request, {
        currency,
        digitalOnly,
        lines,
      })) ?? quoted(request, { digitalOnly, lines });
    checkMinimumCharge(currency, lines, shippingOptions);
    // Whole seconds: Stripe's expires_at is in seconds, and the hold must end with the session.
    const expiresAt = new Date(Math.floor((now() + deps.sessionTtlMs) / 1000) * 1000);
    let order: CheckoutOrder;
    let lowStockSkus: string[] | undefined;
    try {
      ({ order, lowStockSkus } = await deps.orders.createPendingOrder({
        customerId: request.customerId,
        email: request.email,
        currency,
        lines,
        idempotencyKey,
        requestHash,
        expiresAt,
        ...(shippingOptions
          ? { destination: request.destination ?? null, shippingOptions: shippingOptions.map(toQuoted) }
          : {}),
        ...(pricingTerms ? { pricingTerms } : {}),
      }));
    } catch (error) {
      if (error instanceof HoldOutOfStock) throw outOfStock([error]);
      if (idempotencyKey !== null && error instanceof IdempotencyKeyTaken) {
        // A concurrent request with the same key won the insert: answer as its retry would.
        const existing = await deps.orders.findByIdempotencyKey(request.customerId, idempotencyKey);
        if (existing) return resume(existing, requestHash);
      }
      throw error;
    }
    if (lowStockSkus && lowStockSkus.length > 0 && deps.onLowStock) {
      await deps.onLowStock(lowStockSkus, order.orderId).catch((error: unknown) => {
        logger.warn(
          { err: error, skus: lowStockSkus },
          "low stock not announced; the daily watch will see it",
        );
      });
    }
    return finish(order, digitalOnly);
  }

  return {
    async checkout(request, options = {}) {
      return start(request, options.idempotencyKey ?? null, requestHashOf(request));
    },

    async expireHalfMade(orderId) {
      const order = await deps.orders.findCheckout(orderId);
      if (!order || order.status !== "pending" || order.checkoutSessionId !== null) return "not-half-made";
      let sessionId: string | null = null;
      try {
        // Same parameters, same key: Stripe answers with the session it made, if it made one.
        sessionId = (await deps.sessions.create(await sessionRequestFor(order))).id;
      } catch (error) {
        // Refused outright (expires_at already too close, say): no session exists for this order.
        if (!definitelyNotCreated(error)) throw error;
      }
      if (sessionId !== null) await deps.sessions.expire(sessionId);
      await deps.orders.abandon(orderId, "checkout never finished; expired by the checkout sweep");
      return "expired";
    },
  };
}
