import Stripe from "stripe";

export interface CheckoutSessionRequest {
  orderId: string;
  customerId: string;
  email: string;
  currency: string;
  lines: { sku: string; name: string; unitPrice: number; quantity: number }[];
  successUrl: string;
  cancelUrl: string;
  /** When the session stops being payable; the stock hold lasts as long. */
  expiresAt: Date;
  /** Ask for a shipping address (and a phone); unset for digital-only orders. */
  shipping?: ShippingCollection;
  /**
   * What the customer may pay for shipping, as quoted from the shop's rate table when the order
   * was made (stored with it, so a rebuilt request is identical under the same idempotency key).
   */
  shippingOptions?: readonly QuotedShippingOption[];
  /** Stripe Tax and discount codes, as stored with the checkout (absent: neither, as before). */
  pricingTerms?: CheckoutPricingTerms;
}

/**
 * Stripe Tax and promotion codes for one checkout (decision 0204), stored with it
 * (checkout_requests.pricing_terms) when it is made: the sweep's rebuilt request must carry the same
 * parameters under the same idempotency key, whatever the configuration says by then.
 */
export interface CheckoutPricingTerms {
  /** `automatic_tax[enabled]`; with it every line carries `tax_behavior` and its `tax_code`. */
  automaticTax: boolean;
  /** The catalog's prices (and shipping rates) exclude or include tax: `price_data.tax_behavior`. */
  taxBehavior: "exclusive" | "inclusive";
  /** `allow_promotion_codes`: the customer may type a code on Stripe's page. */
  allowPromotionCodes: boolean;
  /** Each line's Stripe tax code, by SKU (the product's or the shop's default); empty without tax. */
  taxCodes: Record<string, string>;
}

/** The session parameters of the pricing terms (none without them, so older requests stay the same). */
function pricingParamsOf(terms: CheckoutPricingTerms | undefined) {
  return {
    ...(terms?.automaticTax ? { automatic_tax: { enabled: true } } : {}),
    ...(terms?.allowPromotionCodes ? { allow_promotion_codes: true } : {}),
  };
}

/** A line's tax parameters: its tax code and the shop's tax behaviour, only with automatic tax. */
function lineTaxOf(terms: CheckoutPricingTerms | undefined, sku: string) {
  if (!terms?.automaticTax) return { price: {}, product: {} };
  const taxCode = terms.taxCodes[sku];
  return {
    price: { tax_behavior: terms.taxBehavior },
    product: taxCode ? { tax_code: taxCode } : {},
  };
}

/** One shipping option as quoted (src/shipping/rate-table.ts ShippingQuote). */
export interface QuotedShippingOption {
  rateId: string;
  displayName: string;
  amount: number;
  currency: string;
  deliveryEstimate: {
    minimum: { unit: Stripe.ShippingRateCreateParams.DeliveryEstimate.Minimum.Unit; value: number };
    maximum: { unit: Stripe.ShippingRateCreateParams.DeliveryEstimate.Maximum.Unit; value: number };
  } | null;
  /** The carrier service the label is bought at for this option (the rate table's `carrierService`). */
  carrierService?: { carrier?: string | undefined; service: string } | undefined;
}

function shippingOptionsOf(
  options: readonly QuotedShippingOption[],
  /** With automatic tax: the rates include or exclude tax as the catalog's prices do (decision 0204). */
  taxBehavior?: CheckoutPricingTerms["taxBehavior"],
): Stripe.Checkout.SessionCreateParams.ShippingOption[] {
  return options.map((option) => ({
    shipping_rate_data: {
      type: "fixed_amount",
      display_name: option.displayName,
      fixed_amount: { amount: option.amount, currency: option.currency },
      // Names the table's rate (and the carrier service it ships at), so the option the customer
      // chose is recorded with the order's money and its label bought at that service.
      metadata: {
        rateId: option.rateId,
        ...(option.carrierService?.carrier ? { carrier: option.carrierService.carrier } : {}),
        ...(option.carrierService ? { service: option.carrierService.service } : {}),
      },
      ...(option.deliveryEstimate ? { delivery_estimate: option.deliveryEstimate } : {}),
      ...(taxBehavior ? { tax_behavior: taxBehavior } : {}),
    },
  }));
}

export interface ShippingCollection {
  /** ISO 3166-1 alpha-2 codes (SHIPPING_COUNTRIES). */
  allowedCountries: readonly string[];
  /** Some carriers need a phone on the label (SHIPPING_COLLECT_PHONE). */
  collectPhone: boolean;
}

export interface CreatedCheckoutSession {
  id: string;
  url: string;
}

/** Hosted payment pages; Stripe Checkout in production. */
export interface CheckoutSessions {
  create(request: CheckoutSessionRequest): Promise<CreatedCheckoutSession>;
  /** Makes an open session unpayable at once; a session no longer open is left as it is. */
  expire(checkoutSessionId: string): Promise<void>;
  /** Stripe's own answer: `open`, `complete` or `expired`. */
  status(checkoutSessionId: string): Promise<Stripe.Checkout.Session.Status>;
}

/**
 * One Checkout Session per order. The idempotency key is derived from the order id, so a retried
 * call (our client's, or stripe-node's own after a dropped connection) returns the same session
 * instead of opening a second one; Stripe keeps keys for 24 hours, longer than a session lives.
 */
export function createStripeCheckoutSessions(
  stripe: Stripe,
  options: { captureMethod: "manual" | "automatic" },
): CheckoutSessions {
  return {
    async create(request) {
      const metadata = { orderId: request.orderId, customerId: request.customerId };
      const session = await stripe.checkout.sessions.create(
        {
          mode: "payment",
          line_items: request.lines.map((line) => {
            const tax = lineTaxOf(request.pricingTerms, line.sku);
            return {
              price_data: {
                currency: request.currency,
                unit_amount: line.unitPrice,
                product_data: { name: line.name, metadata: { sku: line.sku }, ...tax.product },
                ...tax.price,
              },
              quantity: line.quantity,
            };
          }),
          client_reference_id: request.orderId,
          customer_email: request.email,
          // The card is saved to a Customer of its own, so a later difference (a dearer exchange)
          // can be charged off-session without the customer at the page (src/returns).
          customer_creation: "always",
          metadata,
          payment_intent_data: {
            capture_method: options.captureMethod,
            metadata,
            setup_future_usage: "off_session",
          },
          ...(request.shipping
            ? {
                shipping_address_collection: {
                  allowed_countries: [
                    ...request.shipping.allowedCountries,
                  ] as Stripe.Checkout.SessionCreateParams.ShippingAddressCollection.AllowedCountry[],
                },
                phone_number_collection: { enabled: request.shipping.collectPhone },
              }
            : {}),
          ...(request.shippingOptions && request.shippingOptions.length > 0
            ? {
                shipping_options: shippingOptionsOf(
                  request.shippingOptions,
                  request.pricingTerms?.automaticTax ? request.pricingTerms.taxBehavior : undefined,
                ),
              }
            : {}),
          ...pricingParamsOf(request.pricingTerms),
          success_url: request.successUrl,
          cancel_url: request.cancelUrl,
          expires_at: Math.floor(request.expiresAt.getTime() / 1000),
        },
        { idempotencyKey: `checkout-session-${request.orderId}` },
      );
      if (!session.url) throw new Error(`Stripe returned Checkout Session ${session.id} without a URL`);
      return { id: session.id, url: session.url };
    },

    async expire(checkoutSessionId) {
      const session = await stripe.checkout.sessions.retrieve(checkoutSessionId);
      if (session.status !== "open") return;
      try {
        await stripe.checkout.sessions.expire(checkoutSessionId);
      } catch (error) {
        // Completed or expired meanwhile: either way it can no longer be paid through us.
        if (error instanceof Stripe.errors.StripeInvalidRequestError) return;
        throw error;
      }
    },

    async status(checkoutSessionId) {
      const session = await stripe.checkout.sessions.retrieve(checkoutSessionId);
      return session.status ?? "open";
    },
  };
}

/** The pay page of a Checkout Session that can still be paid (the checkout-cancelled page's way back). */
export function checkoutPayUrl(stripe: Stripe) {
  return async (checkoutSessionId: string): Promise<string | undefined> => {
    const session = await stripe.checkout.sessions.retrieve(checkoutSessionId);
    return session.status === "open" ? (session.url ?? undefined) : undefined;
  };
}
