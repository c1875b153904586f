import { stripeErrors } from "./errors";
import type { SandboxEndpoint } from "./failures";
import type { ParamValue, Params } from "./form";

/**
 * The request parameters Stripe accepts on each endpoint the sandbox serves, so that a parameter
 * Stripe does not know (a typo such as `amount_to_captur`) is refused here as Stripe refuses it,
 * instead of passing every local test and failing only in production.
 *
 * Source: the request parameter types of stripe-node 15.12.0, the last release pinned to API
 * version 2024-04-10 (`Stripe.PaymentIntentCaptureParams`, `Stripe.Checkout.SessionCreateParams`,
 * ...), which stripe-node generates from Stripe's OpenAPI specification (github.com/stripe/openapi,
 * openapi/spec3.json) for that version. The trees below were printed from those types with the
 * TypeScript compiler API and are kept by hand since; see docs/stripe-sandbox.md for how to redo it.
 *
 * Shapes: `S` a scalar; `MAP` a free-form hash (metadata: any keys); `ANY` a hash Stripe accepts
 * whose contents the sandbox does not check (only `payment_method_options`, dozens of
 * per-method sub-hashes this service never sends); `list(x)` an array of x; `scalarOr(h)` either;
 * an object literal a hash with exactly those keys. Every shape also accepts "" (Stripe's "unset").
 * Which values are valid (enums, integers) is each endpoint's business, as in Stripe.
 */
type Shape = "scalar" | "map" | "any" | ListShape | ScalarOrShape | HashShape;
interface HashShape {
  [key: string]: Shape;
}
class ListShape {
  constructor(readonly item: Shape) {}
}
class ScalarOrShape {
  constructor(readonly hash: HashShape) {}
}

const S = "scalar" as const;
const MAP = "map" as const;
const ANY = "any" as const;
const list = (item: Shape): ListShape => new ListShape(item);
const scalarOr = (hash: HashShape): ScalarOrShape => new ScalarOrShape(hash);

export const acceptedParams: Record<SandboxEndpoint, HashShape> = {
  "checkout.sessions.create": {
    after_expiration: { recovery: { allow_promotion_codes: S, enabled: S } },
    allow_promotion_codes: S,
    automatic_tax: { enabled: S, liability: { account: S, type: S } },
    billing_address_collection: S,
    cancel_url: S,
    client_reference_id: S,
    consent_collection: {
      payment_method_reuse_agreement: { position: S },
      promotions: S,
      terms_of_service: S,
    },
    currency: S,
    custom_fields: list({
      dropdown: { default_value: S, options: list({ label: S, value: S }) },
      key: S,
      label: { custom: S, type: S },
      numeric: { default_value: S, maximum_length: S, minimum_length: S },
      optional: S,
      text: { default_value: S, maximum_length: S, minimum_length: S },
      type: S,
    }),
    custom_text: {
      after_submit: { message: S },
      shipping_address: { message: S },
      submit: { message: S },
      terms_of_service_acceptance: { message: S },
    },
    customer: S,
    customer_creation: S,
    customer_email: S,
    customer_update: { address: S, name: S, shipping: S },
    discounts: list({ coupon: S, promotion_code: S }),
    expand: list(S),
    expires_at: S,
    invoice_creation: {
      enabled: S,
      invoice_data: {
        account_tax_ids: list(S),
        custom_fields: list({ name: S, value: S }),
        description: S,
        footer: S,
        issuer: { account: S, type: S },
        metadata: MAP,
        rendering_options: { amount_tax_display: S },
      },
    },
    line_items: list({
      adjustable_quantity: { enabled: S, maximum: S, minimum: S },
      dynamic_tax_rates: list(S),
      price: S,
      price_data: {
        currency: S,
        product: S,
        product_data: { description: S, images: list(S), metadata: MAP, name: S, tax_code: S },
        recurring: { interval: S, interval_count: S },
        tax_behavior: S,
        unit_amount: S,
        unit_amount_decimal: S,
      },
      quantity: S,
      tax_rates: list(S),
    }),
    locale: S,
    metadata: MAP,
    mode: S,
    payment_intent_data: {
      application_fee_amount: S,
      capture_method: S,
      description: S,
      metadata: MAP,
      on_behalf_of: S,
      receipt_email: S,
      setup_future_usage: S,
      shipping: {
        address: { city: S, country: S, line1: S, line2: S, postal_code: S, state: S },
        carrier: S,
        name: S,
        phone: S,
        tracking_number: S,
      },
      statement_descriptor: S,
      statement_descriptor_suffix: S,
      transfer_data: { amount: S, destination: S },
      transfer_group: S,
    },
    payment_method_collection: S,
    payment_method_configuration: S,
    payment_method_data: { allow_redisplay: S },
    payment_method_options: ANY,
    payment_method_types: list(S),
    phone_number_collection: { enabled: S },
    redirect_on_completion: S,
    return_url: S,
    saved_payment_method_options: { allow_redisplay_filters: list(S), payment_method_save: S },
    setup_intent_data: { description: S, metadata: MAP, on_behalf_of: S },
    shipping_address_collection: { allowed_countries: list(S) },
    shipping_options: list({
      shipping_rate: S,
      shipping_rate_data: {
        delivery_estimate: { maximum: { unit: S, value: S }, minimum: { unit: S, value: S } },
        display_name: S,
        fixed_amount: { amount: S, currency: S, currency_options: MAP },
        metadata: MAP,
        tax_behavior: S,
        tax_code: S,
        type: S,
      },
    }),
    submit_type: S,
    subscription_data: {
      application_fee_percent: S,
      billing_cycle_anchor: S,
      default_tax_rates: list(S),
      description: S,
      invoice_settings: { issuer: { account: S, type: S } },
      metadata: MAP,
      on_behalf_of: S,
      proration_behavior: S,
      transfer_data: { amount_percent: S, destination: S },
      trial_end: S,
      trial_period_days: S,
      trial_settings: { end_behavior: { missing_payment_method: S } },
    },
    success_url: S,
    tax_id_collection: { enabled: S },
    ui_mode: S,
  },
  "checkout.sessions.retrieve": { expand: list(S) },
  "checkout.sessions.line_items": { ending_before: S, expand: list(S), limit: S, starting_after: S },
  "checkout.sessions.expire": { expand: list(S) },
  // stripe-node's PaymentIntentCreateParams (the same version), less the per-method hashes.
  "payment_intents.create": {
    amount: S,
    application_fee_amount: S,
    automatic_payment_methods: { allow_redirects: S, enabled: S },
    capture_method: S,
    confirm: S,
    confirmation_method: S,
    currency: S,
    customer: S,
    description: S,
    error_on_requires_action: S,
    expand: list(S),
    mandate: S,
    mandate_data: ANY,
    metadata: MAP,
    off_session: S,
    on_behalf_of: S,
    payment_method: S,
    payment_method_configuration: S,
    payment_method_data: ANY,
    payment_method_options: ANY,
    payment_method_types: list(S),
    radar_options: { session: S },
    receipt_email: S,
    return_url: S,
    setup_future_usage: S,
    shipping: {
      address: { city: S, country: S, line1: S, line2: S, postal_code: S, state: S },
      carrier: S,
      name: S,
      phone: S,
      tracking_number: S,
    },
    statement_descriptor: S,
    statement_descriptor_suffix: S,
    transfer_data: { amount: S, destination: S },
    transfer_group: S,
    use_stripe_sdk: S,
  },
  "payment_intents.retrieve": { client_secret: S, expand: list(S) },
  "payment_intents.capture": {
    amount_to_capture: S,
    application_fee_amount: S,
    expand: list(S),
    final_capture: S,
    metadata: MAP,
    statement_descriptor: S,
    statement_descriptor_suffix: S,
    transfer_data: { amount: S },
  },
  "payment_intents.cancel": { cancellation_reason: S, expand: list(S) },
  "refunds.create": {
    amount: S,
    charge: S,
    currency: S,
    customer: S,
    expand: list(S),
    instructions_email: S,
    metadata: MAP,
    origin: S,
    payment_intent: S,
    reason: S,
    refund_application_fee: S,
    reverse_transfer: S,
  },
  "refunds.retrieve": { expand: list(S) },
  "events.list": {
    created: scalarOr({ gt: S, gte: S, lt: S, lte: S }),
    delivery_success: S,
    ending_before: S,
    expand: list(S),
    limit: S,
    starting_after: S,
    type: S,
    types: list(S),
  },
  "events.retrieve": { expand: list(S) },
  // stripe-node's RefundListParams, BalanceTransactionListParams and DisputeListParams.
  "refunds.list": {
    charge: S,
    created: scalarOr({ gt: S, gte: S, lt: S, lte: S }),
    ending_before: S,
    expand: list(S),
    limit: S,
    payment_intent: S,
    starting_after: S,
  },
  "balance_transactions.list": {
    created: scalarOr({ gt: S, gte: S, lt: S, lte: S }),
    currency: S,
    ending_before: S,
    expand: list(S),
    limit: S,
    payout: S,
    source: S,
    starting_after: S,
    type: S,
  },
  "disputes.retrieve": { expand: list(S) },
  // stripe-node's CouponCreateParams, PromotionCodeCreateParams / ListParams and
  // ShippingRateCreateParams (stripe-node 23.1.0, the pinned client).
  "coupons.create": {
    amount_off: S,
    applies_to: { products: list(S) },
    currency: S,
    currency_options: MAP,
    duration: S,
    duration_in_months: S,
    expand: list(S),
    id: S,
    max_redemptions: S,
    metadata: MAP,
    name: S,
    percent_off: S,
    redeem_by: S,
  },
  "coupons.retrieve": { expand: list(S) },
  "promotion_codes.create": {
    active: S,
    code: S,
    customer: S,
    customer_account: S,
    expand: list(S),
    expires_at: S,
    max_redemptions: S,
    metadata: MAP,
    promotion: { coupon: S, type: S },
    restrictions: {
      currency_options: MAP,
      first_time_transaction: S,
      minimum_amount: S,
      minimum_amount_currency: S,
    },
  },
  "promotion_codes.retrieve": { expand: list(S) },
  "promotion_codes.list": {
    active: S,
    code: S,
    coupon: S,
    created: scalarOr({ gt: S, gte: S, lt: S, lte: S }),
    customer: S,
    customer_account: S,
    ending_before: S,
    expand: list(S),
    limit: S,
    starting_after: S,
  },
  "shipping_rates.create": {
    delivery_estimate: { maximum: { unit: S, value: S }, minimum: { unit: S, value: S } },
    display_name: S,
    expand: list(S),
    fixed_amount: { amount: S, currency: S, currency_options: MAP },
    metadata: MAP,
    tax_behavior: S,
    tax_code: S,
    type: S,
  },
  "shipping_rates.retrieve": { expand: list(S) },
  "disputes.list": {
    charge: S,
    created: scalarOr({ gt: S, gte: S, lt: S, lte: S }),
    ending_before: S,
    expand: list(S),
    limit: S,
    payment_intent: S,
    starting_after: S,
  },
};

/**
 * The `expand[]` paths the sandbox renders, per endpoint. Stripe can expand more (any expandable
 * field); asking the sandbox for one it does not render is refused rather than silently ignored,
 * so a test never believes it got an expanded object it did not.
 */
const sessionExpansions = [
  "payment_intent",
  "line_items",
  "line_items.data.price.product",
  "shipping_cost.shipping_rate",
  "total_details.breakdown",
];
const paymentIntentExpansions = ["latest_charge"];
export const renderedExpansions: Record<SandboxEndpoint, readonly string[]> = {
  "checkout.sessions.create": sessionExpansions,
  "checkout.sessions.retrieve": sessionExpansions,
  "checkout.sessions.expire": sessionExpansions,
  "checkout.sessions.line_items": [],
  "payment_intents.create": paymentIntentExpansions,
  "payment_intents.retrieve": paymentIntentExpansions,
  "payment_intents.capture": paymentIntentExpansions,
  "payment_intents.cancel": paymentIntentExpansions,
  "refunds.create": [],
  "refunds.retrieve": [],
  "events.list": [],
  "events.retrieve": [],
  "refunds.list": [],
  "balance_transactions.list": ["data.source"],
  "disputes.list": [],
  "disputes.retrieve": [],
  "coupons.create": [],
  "coupons.retrieve": [],
  "promotion_codes.create": [],
  "promotion_codes.retrieve": [],
  "promotion_codes.list": [],
  "shipping_rates.create": [],
  "shipping_rates.retrieve": [],
};

function isHash(value: ParamValue): value is Params {
  return typeof value === "object" && !Array.isArray(value);
}

/** Levenshtein distance, for Stripe's "Did you mean ...?" hint. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] as number;
      row[j] = Math.min(above + 1, (row[j - 1] as number) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] as number;
}

/** Stripe names the whole path and, for a near miss, suggests the sibling it probably meant. */
function unknownParameter(path: string, key: string, known: string[]): never {
  const closest = known
    .map((candidate) => ({ candidate, d: distance(key, candidate) }))
    .filter(({ d }) => d <= Math.max(1, Math.floor(key.length / 4)))
    .sort((a, b) => a.d - b.d)[0];
  throw stripeErrors.unknownParam(path, closest?.candidate);
}

function check(value: ParamValue, shape: Shape, path: string): void {
  if (value === "" || shape === ANY) return;
  if (shape === S) {
    if (typeof value !== "string") throw stripeErrors.invalidParam(path, `Invalid string: ${path}`);
    return;
  }
  if (shape === MAP) {
    if (!isHash(value))
      throw stripeErrors.invalidParam(path, `Invalid hash: ${path}`, "parameter_invalid_hash");
    return;
  }
  if (shape instanceof ScalarOrShape) {
    if (typeof value !== "string") check(value, shape.hash, path);
    return;
  }
  if (shape instanceof ListShape) {
    // A lone value where a list is expected (`expand=x`) is a one-item list, as in Stripe.
    const items = Array.isArray(value) ? value : isHash(value) ? null : [value];
    if (!items) throw stripeErrors.invalidParam(path, `Invalid array: ${path}`, "parameter_invalid_array");
    items.forEach((item, index) => check(item, shape.item, `${path}[${index}]`));
    return;
  }
  if (!isHash(value))
    throw stripeErrors.invalidParam(path, `Invalid hash: ${path}`, "parameter_invalid_hash");
  const known = Object.keys(shape);
  for (const [key, child] of Object.entries(value)) {
    const childPath = path === "" ? key : `${path}[${key}]`;
    const childShape = shape[key];
    if (childShape === undefined) unknownParameter(childPath, key, known);
    check(child, childShape, childPath);
  }
}

/** Throws Stripe's 400 `parameter_unknown` (or `parameter_invalid_*`) for the first bad parameter. */
export function validateParams(endpoint: SandboxEndpoint, params: Params): void {
  check(params, acceptedParams[endpoint], "");
  const expand = params.expand;
  const paths = expand === undefined || expand === "" ? [] : Array.isArray(expand) ? expand : [expand];
  for (const path of paths) {
    if (typeof path === "string" && !renderedExpansions[endpoint].includes(path)) {
      throw stripeErrors.invalidParam(
        "expand",
        `This property cannot be expanded (${path}) in the Stripe sandbox: it renders ${
          renderedExpansions[endpoint].join(", ") || "no expansions"
        } on this endpoint.`,
      );
    }
  }
}
