import type Stripe from "stripe";
import type { Origin, Outcome, SandboxContext } from "./context";
import { customerOrigin, unixSeconds } from "./context";
import type { DeclineCode } from "./errors";
import { stripeErrors } from "./errors";
import { recordEvent } from "./events";
import { fromFixture } from "./fixtures";
import type { ParamValue, Params } from "./form";
import {
  optionalHash,
  optionalInteger,
  optionalList,
  optionalString,
  requiredString,
  stringMap,
} from "./form";
import { stripeId } from "./ids";
import { bookCharge } from "./ledger";
import { couponOf, promotionCodeProblem, redeemDiscount } from "./discounts";
import {
  automaticTaxFrom,
  checkMinimumCharge,
  discountsFrom,
  repriceSession,
  shippingOptionsFrom,
  type TaxAddress,
} from "./session-pricing";
import type { PaymentSettings } from "./store";
import {
  authorizeCharge,
  chargeOf,
  declinePayment,
  newCharge,
  newPaymentIntent,
  retrievePaymentIntent,
} from "./payment-intents";

export type CompletionOutcome = "authorized" | "paid" | "declined" | "async_pending";

const knownParams = new Set([
  "mode",
  "line_items",
  "success_url",
  "cancel_url",
  "return_url",
  "ui_mode",
  "client_reference_id",
  "metadata",
  "customer",
  "customer_creation",
  "customer_email",
  "payment_intent_data",
  "payment_method_types",
  "expires_at",
  "expand",
  "locale",
  "submit_type",
  "billing_address_collection",
  "allow_promotion_codes",
  "shipping_address_collection",
  "phone_number_collection",
  "shipping_options",
  "discounts",
  "automatic_tax",
]);

/** A shipping address as the customer types it on the hosted page (Stripe's Address shape). */
export interface CustomerShipping {
  name: string;
  phone?: string;
  address: {
    line1: string;
    line2?: string | null;
    city: string;
    state?: string | null;
    postal_code: string;
    country: string;
  };
}

/** What the stand-in's customer types when a test gives no address. */
const defaultShipping: CustomerShipping = {
  name: "Jenny Rosen",
  phone: "+14155550123",
  address: {
    line1: "510 Townsend St",
    city: "San Francisco",
    state: "CA",
    postal_code: "94103",
    country: "US",
  },
};

function shippingCollectionFrom(params: Params): Stripe.Checkout.Session.ShippingAddressCollection | null {
  const hash = optionalHash(params, "shipping_address_collection");
  if (!hash) return null;
  const countries = optionalList(hash, "allowed_countries");
  if (!countries || countries.length === 0) {
    throw stripeErrors.missingParam("shipping_address_collection[allowed_countries]");
  }
  countries.forEach((country, index) => {
    if (typeof country !== "string" || !/^[A-Z]{2}$/.test(country)) {
      throw stripeErrors.invalidParam(
        `shipping_address_collection[allowed_countries][${index}]`,
        `Invalid shipping_address_collection[allowed_countries][${index}]: must be a two-letter country code`,
      );
    }
  });
  return {
    allowed_countries: countries as Stripe.Checkout.Session.ShippingAddressCollection.AllowedCountry[],
  };
}

const minimumLifetimeSeconds = 30 * 60;
const maximumLifetimeSeconds = 24 * 60 * 60;

function lineItemFrom(
  value: ParamValue,
  index: number,
  sessionId: string,
  created: number,
): { item: Stripe.LineItem; product: Stripe.Product } {
  const label = `line_items[${index}]`;
  if (typeof value !== "object" || Array.isArray(value))
    throw stripeErrors.invalidParam(label, `Invalid hash: ${label}`);
  const price = optionalString(value, "price");
  if (price !== undefined) throw stripeErrors.resourceMissing("price", price, `${label}[price]`);
  const priceData = optionalHash(value, "price_data");
  if (!priceData) throw stripeErrors.missingParam(`${label}[price_data]`);
  const currency = requiredString(priceData, "currency", `${label}[price_data][currency]`).toLowerCase();
  const unitAmount = optionalInteger(priceData, "unit_amount", `${label}[price_data][unit_amount]`);
  if (unitAmount === undefined) throw stripeErrors.missingParam(`${label}[price_data][unit_amount]`);
  if (unitAmount < 0) {
    throw stripeErrors.invalidParam(
      `${label}[price_data][unit_amount]`,
      "This value must be greater than or equal to 0.",
      "parameter_invalid_integer",
    );
  }
  const taxBehavior = optionalString(priceData, "tax_behavior") ?? "unspecified";
  if (!["exclusive", "inclusive", "unspecified"].includes(taxBehavior)) {
    throw stripeErrors.invalidParam(
      `${label}[price_data][tax_behavior]`,
      `Invalid ${label}[price_data][tax_behavior]: must be one of exclusive, inclusive, or unspecified`,
    );
  }
  const productData = optionalHash(priceData, "product_data");
  if (!productData) throw stripeErrors.missingParam(`${label}[price_data][product_data]`);
  const taxCode = optionalString(productData, "tax_code");
  // Stripe knows its tax codes (txcd_ and eight digits, GET /v1/tax_codes); any other is no such code.
  if (taxCode !== undefined && !/^txcd_\d{8}$/.test(taxCode)) {
    throw stripeErrors.resourceMissing("tax_code", taxCode, `${label}[price_data][product_data][tax_code]`);
  }
  const name = requiredString(productData, "name", `${label}[price_data][product_data][name]`);
  const quantity = optionalInteger(value, "quantity", `${label}[quantity]`);
  if (quantity === undefined) throw stripeErrors.missingParam(`${label}[quantity]`);
  if (quantity < 1) {
    throw stripeErrors.invalidParam(
      `${label}[quantity]`,
      "This value must be greater than or equal to 1.",
      "parameter_invalid_integer",
    );
  }
  const fixture = fromFixture("item");
  const amount = unitAmount * quantity;
  const productId = `prod_${sessionId.slice(-10)}${index}`;
  // Checkout makes a Product of product_data; its metadata (our SKU) is read back by expanding
  // line_items.data.price.product, as from Stripe.
  const product = {
    id: productId,
    object: "product",
    active: true,
    created,
    description: optionalString(productData, "description") ?? null,
    images: [],
    livemode: false,
    marketing_features: [],
    metadata: stringMap(productData, "metadata"),
    name,
    package_dimensions: null,
    shippable: null,
    statement_descriptor: null,
    tax_code: taxCode ?? null,
    type: "service",
    unit_label: null,
    updated: created,
    url: null,
  } as unknown as Stripe.Product;
  const item = {
    ...fixture,
    id: stripeId("li"),
    amount_discount: 0,
    amount_subtotal: amount,
    amount_tax: 0,
    amount_total: amount,
    currency,
    description: name,
    price: {
      ...(fixture.price as Stripe.Price),
      id: `price_${sessionId.slice(-12)}${index}`,
      currency,
      product: productId,
      recurring: null,
      tax_behavior: taxBehavior,
      transform_quantity: null,
      type: "one_time",
      unit_amount: unitAmount,
      unit_amount_decimal: String(unitAmount),
    },
    quantity,
    metadata: null,
    adjustable_quantity: null,
  } as unknown as Stripe.LineItem;
  return { item, product };
}

function captureMethodFrom(paymentIntentData: Params | undefined): Stripe.PaymentIntent.CaptureMethod {
  const value = paymentIntentData ? optionalString(paymentIntentData, "capture_method") : undefined;
  if (value === undefined) return "automatic";
  if (value !== "automatic" && value !== "automatic_async" && value !== "manual") {
    throw stripeErrors.invalidParam(
      "payment_intent_data[capture_method]",
      "Invalid payment_intent_data[capture_method]: must be one of automatic, automatic_async, or manual",
    );
  }
  return value;
}

function setupFutureUsageFrom(paymentIntentData: Params | undefined): PaymentSettings["setupFutureUsage"] {
  const value = paymentIntentData ? optionalString(paymentIntentData, "setup_future_usage") : undefined;
  if (value === undefined) return null;
  if (value !== "on_session" && value !== "off_session") {
    throw stripeErrors.invalidParam(
      "payment_intent_data[setup_future_usage]",
      "Invalid payment_intent_data[setup_future_usage]: must be one of on_session or off_session",
    );
  }
  return value;
}

/** Stripe: `customer_creation` is `always` or `if_required`, and cannot be set with `customer`. */
function customerCreationFrom(params: Params): PaymentSettings["customerCreation"] {
  const value = optionalString(params, "customer_creation");
  if (value === undefined) return null;
  if (value !== "always" && value !== "if_required") {
    throw stripeErrors.invalidParam(
      "customer_creation",
      "Invalid customer_creation: must be one of always or if_required",
    );
  }
  if (optionalString(params, "customer") !== undefined) {
    throw stripeErrors.invalidParam(
      "customer_creation",
      "You may only specify one of these parameters: customer, customer_creation.",
    );
  }
  return value;
}

function expiresAtFrom(params: Params, createdSeconds: number): number {
  const expiresAt = optionalInteger(params, "expires_at");
  if (expiresAt === undefined) return createdSeconds + maximumLifetimeSeconds;
  const lifetime = expiresAt - createdSeconds;
  if (lifetime < minimumLifetimeSeconds || lifetime > maximumLifetimeSeconds) {
    throw stripeErrors.invalidParam(
      "expires_at",
      "The `expires_at` timestamp must be between 30 minutes and 24 hours from Checkout Session creation.",
      "parameter_invalid_integer",
    );
  }
  return expiresAt;
}

export function createCheckoutSession(ctx: SandboxContext, params: Params): Outcome<Stripe.Checkout.Session> {
  for (const key of Object.keys(params)) {
    // Stripe accepts it (accepted-params.ts let it through) but the sandbox does not model it.
    if (!knownParams.has(key)) {
      throw stripeErrors.invalidParam(
        key,
        `The Stripe sandbox does not implement the parameter ${key} (Stripe accepts it).`,
        "parameter_not_implemented",
      );
    }
  }
  const mode = requiredString(params, "mode");
  if (mode !== "payment") {
    throw stripeErrors.invalidParam(
      "mode",
      "The Stripe sandbox implements mode=payment only.",
      "parameter_invalid_string",
    );
  }
  const id = stripeId("cs_test");
  const rawItems = optionalList(params, "line_items");
  if (!rawItems || rawItems.length === 0) throw stripeErrors.missingParam("line_items");
  const made = rawItems.map((item, index) => lineItemFrom(item, index, id, unixSeconds(ctx.now())));
  const lineItems = made.map((entry) => entry.item);
  const currency = lineItems[0]?.currency as string;
  if (lineItems.some((item) => item.currency !== currency)) {
    throw stripeErrors.invalidParam(
      "line_items",
      "All line items must use the same currency.",
      "parameter_invalid_string",
    );
  }
  const metadata = stringMap(params, "metadata");
  const paymentIntentData = optionalHash(params, "payment_intent_data");
  const created = unixSeconds(ctx.now());
  const amount = lineItems.reduce((sum, item) => sum + item.amount_total, 0);
  const shippingOptions = shippingOptionsFrom(ctx, params, currency);
  const discounts = discountsFrom(ctx, params, { subtotal: amount, currency });
  const fixture = fromFixture("checkout.session");
  const session = {
    ...fixture,
    id,
    after_expiration: null,
    allow_promotion_codes: optionalString(params, "allow_promotion_codes") === "true" ? true : null,
    automatic_tax: automaticTaxFrom(params),
    discounts,
    amount_subtotal: amount,
    amount_total: amount,
    cancel_url: optionalString(params, "cancel_url") ?? null,
    client_reference_id: optionalString(params, "client_reference_id") ?? null,
    collected_information: null,
    consent: null,
    consent_collection: null,
    created,
    currency,
    currency_conversion: null,
    custom_text: {
      after_submit: null,
      shipping_address: null,
      submit: null,
      terms_of_service_acceptance: null,
    },
    customer: optionalString(params, "customer") ?? null,
    customer_details: null,
    customer_email: optionalString(params, "customer_email") ?? null,
    expires_at: expiresAtFrom(params, created),
    invoice_creation: null,
    metadata,
    mode: "payment",
    payment_intent: null,
    payment_method_configuration_details: null,
    payment_status: "unpaid",
    shipping_address_collection: shippingCollectionFrom(params),
    phone_number_collection: {
      enabled: optionalHash(params, "phone_number_collection")?.enabled === "true",
    },
    // Checkout preselects the first option, and the totals include it until the customer picks another.
    shipping_cost: shippingOptions.options[0]
      ? {
          amount_subtotal: 0,
          amount_tax: 0,
          amount_total: 0,
          shipping_rate: shippingOptions.options[0].shipping_rate,
        }
      : null,
    shipping_options: shippingOptions.options,
    status: "open",
    success_url: optionalString(params, "success_url") ?? null,
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    url: `${ctx.baseUrl()}/_sandbox/pay/${id}`,
  } as Stripe.Checkout.Session;
  const breakdown = repriceSession(ctx, session, lineItems, null, shippingOptions.newRates);
  // Refused as a whole, as Stripe refuses it: nothing of it is kept, its inline rates neither.
  checkMinimumCharge(session);
  for (const rate of shippingOptions.newRates) ctx.store.data.shippingRates[rate.id] = rate;
  ctx.store.data.products ??= {};
  for (const { product } of made) ctx.store.data.products[product.id] = product;
  ctx.store.data.breakdowns[id] = breakdown;
  ctx.store.data.sessionSettings[id] = {
    captureMethod: captureMethodFrom(paymentIntentData),
    metadata: paymentIntentData ? stringMap(paymentIntentData, "metadata") : {},
    description: (paymentIntentData && optionalString(paymentIntentData, "description")) ?? null,
    setupFutureUsage: setupFutureUsageFrom(paymentIntentData),
    customerCreation: customerCreationFrom(params),
  };
  ctx.store.data.checkoutSessions[id] = session;
  ctx.store.data.lineItems[id] = lineItems;
  return { result: session, events: [] };
}

export function retrieveCheckoutSession(ctx: SandboxContext, id: string): Stripe.Checkout.Session {
  const session = ctx.store.data.checkoutSessions[id];
  if (!session) throw stripeErrors.resourceMissing("checkout.session", id);
  return session;
}

export function listLineItems(ctx: SandboxContext, id: string): Stripe.ApiList<Stripe.LineItem> {
  retrieveCheckoutSession(ctx, id);
  return {
    object: "list",
    data: ctx.store.data.lineItems[id] ?? [],
    has_more: false,
    url: `/v1/checkout/sessions/${id}/line_items`,
  };
}

/** Applies `expand[]` for the fields this service may ask for. */
export function renderCheckoutSession(
  ctx: SandboxContext,
  session: Stripe.Checkout.Session,
  params: Params,
): unknown {
  const expand = (optionalList(params, "expand") ?? []).filter(
    (value): value is string => typeof value === "string",
  );
  const rendered: Record<string, unknown> = { ...session };
  for (const field of expand) {
    if (field === "payment_intent" && typeof session.payment_intent === "string") {
      rendered.payment_intent = retrievePaymentIntent(ctx, session.payment_intent);
    } else if (field === "line_items") {
      rendered.line_items ??= listLineItems(ctx, session.id);
    } else if (field === "line_items.data.price.product") {
      // Expanding a nested field expands its parents (Stripe's rule): the list, with each price's product.
      const list = listLineItems(ctx, session.id);
      rendered.line_items = {
        ...list,
        data: list.data.map((item) => ({
          ...item,
          price: item.price && {
            ...item.price,
            product:
              typeof item.price.product === "string"
                ? (ctx.store.data.products?.[item.price.product] ?? item.price.product)
                : item.price.product,
          },
        })),
      };
    } else if (field === "shipping_cost.shipping_rate") {
      const rateId = session.shipping_cost?.shipping_rate;
      if (session.shipping_cost && typeof rateId === "string") {
        rendered.shipping_cost = {
          ...session.shipping_cost,
          shipping_rate: ctx.store.data.shippingRates[rateId] ?? rateId,
        };
      }
    } else if (field === "total_details.breakdown") {
      rendered.total_details = {
        ...session.total_details,
        breakdown: ctx.store.data.breakdowns[session.id] ?? { discounts: [], taxes: [] },
      };
    } else if (field !== "payment_intent") {
      throw stripeErrors.invalidParam(
        "expand",
        `This property cannot be expanded (${field}) in the Stripe sandbox.`,
      );
    }
  }
  return rendered;
}

export function expireCheckoutSession(
  ctx: SandboxContext,
  id: string,
  origin: Origin,
): Outcome<Stripe.Checkout.Session> {
  const session = retrieveCheckoutSession(ctx, id);
  if (session.status !== "open") {
    throw stripeErrors.invalidRequest(
      "checkout_session_unexpected_state",
      `Only Checkout Sessions with a status in [open] can be expired. This Checkout Session has a status of ${session.status}.`,
    );
  }
  session.status = "expired";
  // Stripe clears the hosted page's URL once the session is no longer open.
  session.url = null;
  const paymentIntent =
    typeof session.payment_intent === "string"
      ? ctx.store.data.paymentIntents[session.payment_intent]
      : undefined;
  const events: Stripe.Event[] = [];
  if (paymentIntent && paymentIntent.status === "requires_payment_method") {
    paymentIntent.status = "canceled";
    paymentIntent.cancellation_reason = "abandoned";
    paymentIntent.canceled_at = unixSeconds(ctx.now());
    events.push(recordEvent(ctx, "payment_intent.canceled", paymentIntent, origin));
  }
  events.unshift(recordEvent(ctx, "checkout.session.expired", session, origin));
  return { result: session, events };
}

function settingsOf(ctx: SandboxContext, session: Stripe.Checkout.Session): PaymentSettings {
  const settings = ctx.store.data.sessionSettings[session.id];
  if (!settings) throw new Error(`Stripe sandbox state has no payment settings for ${session.id}`);
  return settings;
}

/** Stripe creates the PaymentIntent when the customer first submits the page, then reuses it. */
function paymentIntentFor(
  ctx: SandboxContext,
  session: Stripe.Checkout.Session,
): { paymentIntent: Stripe.PaymentIntent; isNew: boolean } {
  if (typeof session.payment_intent === "string") {
    return { paymentIntent: retrievePaymentIntent(ctx, session.payment_intent), isNew: false };
  }
  const settings = settingsOf(ctx, session);
  const paymentIntent = newPaymentIntent(ctx, {
    amount: session.amount_total ?? 0,
    currency: session.currency ?? "usd",
    captureMethod: settings.captureMethod,
    metadata: settings.metadata,
    description: settings.description,
    receiptEmail: null,
  });
  session.payment_intent = paymentIntent.id;
  return { paymentIntent, isNew: true };
}

export class OutcomeNotPossible extends Error {}

/** What the customer does on the page besides paying: the address typed, the shipping option picked. */
export interface CompletionOptions {
  declineCode?: DeclineCode;
  shipping?: CustomerShipping;
  /** A Shipping Rate id among the session's `shipping_options`; default the first, as the page preselects it. */
  shippingRate?: string;
}

/**
 * What the page settles before it charges: the shipping option the customer picked (the first
 * one unless told) and, with automatic tax, the tax for the address typed (the shipping address
 * when collected, else the billing address; the stand-in's customer has the default one).
 */
function priceAtPayment(
  ctx: SandboxContext,
  session: Stripe.Checkout.Session,
  shippingRate: string | undefined,
  address: CustomerShipping,
): void {
  if (shippingRate !== undefined) {
    if (!(session.shipping_options ?? []).some((option) => option.shipping_rate === shippingRate)) {
      throw new OutcomeNotPossible(
        `Checkout Session ${session.id} offers no shipping option ${shippingRate}`,
      );
    }
    session.shipping_cost = {
      amount_subtotal: 0,
      amount_tax: 0,
      amount_total: 0,
      shipping_rate: shippingRate,
    };
  }
  const taxAddress: TaxAddress = { country: address.address.country, state: address.address.state ?? null };
  ctx.store.data.breakdowns[session.id] = repriceSession(
    ctx,
    session,
    ctx.store.data.lineItems[session.id] ?? [],
    taxAddress,
  );
}

/**
 * What Checkout does with a Customer once the customer pays: `customer_creation: always` makes
 * one (a session given `customer` uses that one), the PaymentIntent names it, and with
 * `setup_future_usage` the card (the PaymentIntent's `payment_method`) is attached to it, so it
 * can be charged later, off-session (POST /v1/payment_intents with `off_session: true`).
 */
function saveCard(
  ctx: SandboxContext,
  session: Stripe.Checkout.Session,
  paymentIntent: Stripe.PaymentIntent,
  email: string,
): void {
  const settings = settingsOf(ctx, session);
  let customerId = typeof session.customer === "string" ? session.customer : null;
  if (!customerId && settings.customerCreation === "always") customerId = stripeId("cus");
  if (!customerId) return;
  const customer = (ctx.store.data.customers[customerId] ??= {
    id: customerId,
    email,
    created: unixSeconds(ctx.now()),
    paymentMethods: [],
  });
  session.customer = customerId;
  paymentIntent.customer = customerId;
  paymentIntent.setup_future_usage = settings.setupFutureUsage ?? null;
  const paymentMethod = paymentIntent.payment_method;
  if (settings.setupFutureUsage && typeof paymentMethod === "string") {
    if (!customer.paymentMethods.includes(paymentMethod)) customer.paymentMethods.push(paymentMethod);
  }
}

/**
 * What a customer does on the hosted page. Mirrors the events Stripe sends for each case:
 * card payments (`paid`, or `authorized` when the session asked for manual capture), an issuer
 * decline (the session stays open for another try) and delayed methods (`async_pending`, settled
 * later by `settleAsyncPayment`).
 */
export function completeCheckoutSession(
  ctx: SandboxContext,
  id: string,
  outcome: CompletionOutcome,
  options: CompletionOptions = {},
): Outcome<Stripe.Checkout.Session> {
  const session = retrieveCheckoutSession(ctx, id);
  const collection = session.shipping_address_collection;
  const shipping = collection ? (options.shipping ?? defaultShipping) : undefined;
  if (collection && shipping && !collection.allowed_countries.includes(shipping.address.country as never)) {
    // The hosted page offers only the allowed countries: no customer can submit another.
    throw new OutcomeNotPossible(
      `Checkout Session ${id} ships to ${collection.allowed_countries.join(", ")} only, not ${shipping.address.country}`,
    );
  }
  if (session.status !== "open")
    throw new OutcomeNotPossible(`Checkout Session ${id} is ${session.status}, not open`);
  const manual = settingsOf(ctx, session).captureMethod === "manual";
  if (outcome === "authorized" && !manual) {
    throw new OutcomeNotPossible(
      `Checkout Session ${id} uses automatic capture; outcome "authorized" needs capture_method=manual (use "paid")`,
    );
  }
  if (outcome === "paid" && manual) {
    throw new OutcomeNotPossible(
      `Checkout Session ${id} uses manual capture; a card payment ends "authorized", not "paid"`,
    );
  }
  priceAtPayment(ctx, session, options.shippingRate, shipping ?? defaultShipping);
  const email = session.customer_email ?? "customer@example.com";
  const { paymentIntent, isNew } = paymentIntentFor(ctx, session);
  // A session first declined and now paid again charges what it costs now (another option, a code).
  paymentIntent.amount = session.amount_total ?? paymentIntent.amount;
  const events: Stripe.Event[] = [];
  if (isNew) events.push(recordEvent(ctx, "payment_intent.created", paymentIntent, customerOrigin));
  if (outcome === "declined") {
    events.push(...declinePayment(ctx, paymentIntent, options.declineCode ?? "card_declined", email));
    return { result: session, events };
  }

  paymentIntent.last_payment_error = null;
  paymentIntent.receipt_email = email;
  session.status = "complete";
  session.url = null;
  session.customer_details = {
    ...(fromFixture("checkout.session").customer_details as Stripe.Checkout.Session.CustomerDetails),
    email,
    ...(shipping ? { name: shipping.name } : {}),
    ...(shipping?.phone && session.phone_number_collection?.enabled ? { phone: shipping.phone } : {}),
  };
  if (shipping) {
    // Where API versions from 2025-03-31 put it (`collected_information.shipping_details`);
    // endpoints pinned to older versions (2024-04-10) saw it at the top level as `shipping_details`.
    const address = {
      line1: shipping.address.line1,
      line2: shipping.address.line2 ?? null,
      city: shipping.address.city,
      state: shipping.address.state ?? null,
      postal_code: shipping.address.postal_code,
      country: shipping.address.country,
    };
    session.collected_information = {
      business_name: null,
      individual_name: null,
      shipping_details: { name: shipping.name, address },
    } as Stripe.Checkout.Session.CollectedInformation;
  }
  saveCard(ctx, session, paymentIntent, email);
  redeemDiscount(ctx, session);
  const charge = newCharge(ctx, paymentIntent, email);
  if (outcome === "async_pending") {
    charge.status = "pending";
    charge.paid = false;
    paymentIntent.status = "processing";
    events.push(recordEvent(ctx, "charge.pending", charge, customerOrigin));
    events.push(recordEvent(ctx, "payment_intent.processing", paymentIntent, customerOrigin));
  } else if (outcome === "authorized") {
    authorizeCharge(ctx, paymentIntent, charge);
    events.push(recordEvent(ctx, "charge.succeeded", charge, customerOrigin));
    events.push(recordEvent(ctx, "payment_intent.amount_capturable_updated", paymentIntent, customerOrigin));
  } else {
    charge.captured = true;
    charge.amount_captured = charge.amount;
    bookCharge(ctx, charge);
    paymentIntent.status = "succeeded";
    paymentIntent.amount_received = paymentIntent.amount;
    session.payment_status = "paid";
    events.push(recordEvent(ctx, "charge.succeeded", charge, customerOrigin));
    events.push(recordEvent(ctx, "payment_intent.succeeded", paymentIntent, customerOrigin));
  }
  events.push(recordEvent(ctx, "checkout.session.completed", session, customerOrigin));
  return { result: session, events };
}

/** A delayed payment method settles (or fails) some time after `checkout.session.completed`. */
export function settleAsyncPayment(
  ctx: SandboxContext,
  id: string,
  succeeded: boolean,
): Outcome<Stripe.Checkout.Session> {
  const session = retrieveCheckoutSession(ctx, id);
  const paymentIntent =
    typeof session.payment_intent === "string"
      ? retrievePaymentIntent(ctx, session.payment_intent)
      : undefined;
  if (session.status !== "complete" || !paymentIntent || paymentIntent.status !== "processing") {
    throw new OutcomeNotPossible(`Checkout Session ${id} has no payment in processing`);
  }
  const charge = chargeOf(ctx, paymentIntent);
  const events: Stripe.Event[] = [];
  if (succeeded) {
    paymentIntent.status = "succeeded";
    paymentIntent.amount_received = paymentIntent.amount;
    session.payment_status = "paid";
    if (charge)
      Object.assign(charge, {
        status: "succeeded",
        paid: true,
        captured: true,
        amount_captured: charge.amount,
      });
    if (charge) bookCharge(ctx, charge);
    if (charge) events.push(recordEvent(ctx, "charge.succeeded", charge, customerOrigin));
    events.push(recordEvent(ctx, "payment_intent.succeeded", paymentIntent, customerOrigin));
    events.push(recordEvent(ctx, "checkout.session.async_payment_succeeded", session, customerOrigin));
  } else {
    paymentIntent.status = "requires_payment_method";
    paymentIntent.last_payment_error = {
      type: "invalid_request_error",
      code: "payment_method_provider_decline",
      message: "The payment was declined by the bank.",
    } as Stripe.PaymentIntent.LastPaymentError;
    if (charge)
      Object.assign(charge, {
        status: "failed",
        paid: false,
        failure_code: "payment_method_provider_decline",
      });
    if (charge) events.push(recordEvent(ctx, "charge.failed", charge, customerOrigin));
    events.push(recordEvent(ctx, "payment_intent.payment_failed", paymentIntent, customerOrigin));
    events.push(recordEvent(ctx, "checkout.session.async_payment_failed", session, customerOrigin));
  }
  return { result: session, events };
}

/**
 * The customer types a promotion code on the hosted page (sessions with `allow_promotion_codes`).
 * Codes match case-insensitively, as Stripe's do. A code that cannot be used is refused with the
 * message the page shows, and changes nothing.
 */
export function applyPromotionCode(
  ctx: SandboxContext,
  id: string,
  code: string,
): { session: Stripe.Checkout.Session; error: string | null } {
  const session = retrieveCheckoutSession(ctx, id);
  if (session.status !== "open")
    throw new OutcomeNotPossible(`Checkout Session ${id} is ${session.status}, not open`);
  if (session.allow_promotion_codes !== true) {
    throw new OutcomeNotPossible(`Checkout Session ${id} does not allow promotion codes`);
  }
  const wanted = code.trim().toUpperCase();
  const matches = Object.values(ctx.store.data.promotionCodes).filter(
    (entry) => entry.code.toUpperCase() === wanted,
  );
  // Several codes can share a text over time (only one active at once): prefer the active one.
  const promotionCode = matches.find((entry) => entry.active) ?? matches[0];
  if (!promotionCode) return { session, error: "This code is invalid." };
  const lines = ctx.store.data.lineItems[id] ?? [];
  const subtotal = lines.reduce((sum, line) => sum + line.amount_subtotal, 0);
  const problem = promotionCodeProblem(ctx, promotionCode, { subtotal, currency: session.currency ?? "usd" });
  if (problem) return { session, error: problem };
  const before = { discounts: session.discounts };
  session.discounts = [{ coupon: couponOf(promotionCode), promotion_code: promotionCode.id }];
  // The page has no address before payment, so tax waits for it (computed when the customer pays).
  const taxAddress = null;
  let breakdown = repriceSession(ctx, session, lines, taxAddress);
  let error: string | null = null;
  try {
    checkMinimumCharge(session);
  } catch (refused) {
    session.discounts = before.discounts;
    breakdown = repriceSession(ctx, session, lines, taxAddress);
    error = refused instanceof Error ? refused.message : String(refused);
  }
  ctx.store.data.breakdowns[id] = breakdown;
  return { session, error };
}
