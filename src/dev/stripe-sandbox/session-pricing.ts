import type Stripe from "stripe";
import type { SandboxContext } from "./context";
import { unixSeconds } from "./context";
import {
  couponOf,
  couponTerms,
  promotionCodeProblem,
  retrieveCoupon,
  retrievePromotionCode,
} from "./discounts";
import { stripeErrors } from "./errors";
import { fromFixture } from "./fixtures";
import type { ParamValue, Params } from "./form";
import { optionalHash, optionalList, optionalString } from "./form";
import { stripeId } from "./ids";
import { priceSession } from "./pricing";
import { shortOfMinimumCharge } from "../../payments/minimum-charge";
import { createShippingRate, retrieveShippingRate } from "./shipping-rates";
import { taxRateFor, type StandInTaxRate } from "./tax-rates";
import { minorToMajorText } from "../../shared/money";

/**
 * What a Checkout Session charges: its shipping options and the chosen one, its discount, its
 * automatic tax, and the totals Stripe derives from them (pricing.ts does the arithmetic).
 */

const isHash = (value: ParamValue): value is Params => typeof value === "object" && !Array.isArray(value);

/**
 * `shipping_options`: each an existing Shipping Rate (`shipping_rate`) or one made on the spot
 * (`shipping_rate_data`). Inline rates are returned unsaved, so a refused session leaves none behind.
 */
export function shippingOptionsFrom(
  ctx: SandboxContext,
  params: Params,
  currency: string,
): { options: Stripe.Checkout.Session.ShippingOption[]; newRates: Stripe.ShippingRate[] } {
  const raw = optionalList(params, "shipping_options") ?? [];
  if (raw.length > 5) {
    throw stripeErrors.invalidParam("shipping_options", "You may only specify up to 5 shipping options.");
  }
  const newRates: Stripe.ShippingRate[] = [];
  const options = raw.map((entry, index) => {
    const label = `shipping_options[${index}]`;
    if (!isHash(entry)) throw stripeErrors.invalidParam(label, `Invalid hash: ${label}`);
    const id = optionalString(entry, "shipping_rate");
    const data = optionalHash(entry, "shipping_rate_data");
    if ((id === undefined) === (data === undefined)) {
      throw stripeErrors.invalidParam(
        label,
        `You must specify exactly one of ${label}[shipping_rate] or ${label}[shipping_rate_data].`,
      );
    }
    const rate =
      id !== undefined
        ? retrieveShippingRate(ctx, id, `${label}[shipping_rate]`)
        : createShippingRate(ctx, data as Params, `${label}[shipping_rate_data]`, false);
    if (id === undefined) newRates.push(rate);
    if (rate.fixed_amount?.currency !== currency) {
      throw stripeErrors.invalidParam(
        `${label}[shipping_rate${id === undefined ? "_data][fixed_amount][currency" : ""}]`,
        `The shipping rate's currency (${rate.fixed_amount?.currency ?? "none"}) must match the currency of the Checkout Session (${currency}).`,
      );
    }
    return { shipping_amount: rate.fixed_amount.amount, shipping_rate: rate.id };
  });
  return { options, newRates };
}

/** `discounts`: at most one coupon or promotion code; exclusive with `allow_promotion_codes`. */
export function discountsFrom(
  ctx: SandboxContext,
  params: Params,
  order: { subtotal: number; currency: string },
): Stripe.Checkout.Session.Discount[] | null {
  const raw = optionalList(params, "discounts");
  if (!raw || raw.length === 0) return null;
  if (optionalString(params, "allow_promotion_codes") === "true") {
    throw stripeErrors.invalidParam(
      "discounts",
      "You may only specify one of these parameters: allow_promotion_codes, discounts.",
    );
  }
  if (raw.length > 1) {
    throw stripeErrors.invalidParam("discounts", "You may only specify one discount on a Checkout Session.");
  }
  const entry = raw[0] as ParamValue;
  if (!isHash(entry)) throw stripeErrors.invalidParam("discounts[0]", "Invalid hash: discounts[0]");
  const couponId = optionalString(entry, "coupon");
  const promoId = optionalString(entry, "promotion_code");
  if ((couponId === undefined) === (promoId === undefined)) {
    throw stripeErrors.invalidParam(
      "discounts[0]",
      "You must specify exactly one of discounts[0][coupon] or discounts[0][promotion_code].",
    );
  }
  if (couponId !== undefined) {
    const coupon = retrieveCoupon(ctx, couponId, "discounts[0][coupon]");
    if (!coupon.valid) {
      throw stripeErrors.invalidParam("discounts[0][coupon]", `Coupon ${couponId} is no longer valid.`);
    }
    if (coupon.amount_off !== null && coupon.currency !== order.currency) {
      throw stripeErrors.invalidParam(
        "discounts[0][coupon]",
        `Coupon ${couponId} is in ${coupon.currency ?? "no currency"}, not ${order.currency}.`,
      );
    }
    return [{ coupon: coupon.id, promotion_code: null }];
  }
  const promotionCode = retrievePromotionCode(ctx, promoId as string, "discounts[0][promotion_code]");
  const problem = promotionCodeProblem(ctx, promotionCode, order);
  if (problem) throw stripeErrors.invalidParam("discounts[0][promotion_code]", problem);
  return [{ coupon: couponOf(promotionCode), promotion_code: promotionCode.id }];
}

export function automaticTaxFrom(params: Params): Stripe.Checkout.Session.AutomaticTax {
  const enabled = optionalHash(params, "automatic_tax")?.enabled === "true";
  return {
    enabled,
    liability: enabled ? { type: "self" } : null,
    provider: enabled ? "stripe" : null,
    // Stripe needs the customer's address first; the hosted page collects it.
    status: enabled ? "requires_location_inputs" : null,
  } as Stripe.Checkout.Session.AutomaticTax;
}

function taxRateObject(ctx: SandboxContext, rate: StandInTaxRate, inclusive: boolean): Stripe.TaxRate {
  return {
    ...fromFixture("tax_rate"),
    // Stripe Tax answers an inclusive and an exclusive price with two rates of one jurisdiction.
    id: inclusive ? `${rate.id}_incl` : rate.id,
    active: true,
    country: rate.country,
    created: unixSeconds(ctx.now()),
    description: `${rate.displayName} (Stripe stand-in's rate table)`,
    display_name: rate.displayName,
    effective_percentage: rate.percentage,
    flat_amount: null,
    inclusive,
    jurisdiction: rate.jurisdiction,
    jurisdiction_level: rate.jurisdictionLevel,
    percentage: rate.percentage,
    rate_type: "percentage",
    state: rate.state,
    tax_type: rate.taxType,
  } as Stripe.TaxRate;
}

/** Where tax is computed: the customer's address, once the page has it. */
export interface TaxAddress {
  country: string;
  state: string | null;
}

/**
 * Recomputes the session's and its lines' amounts from its lines, chosen shipping, discount and
 * (once the address is known) tax; answers the expandable `total_details.breakdown`, which the
 * caller keeps (ctx.store.data.breakdowns) once the session is.
 */
export function repriceSession(
  ctx: SandboxContext,
  session: Stripe.Checkout.Session,
  lines: Stripe.LineItem[],
  taxAddress: TaxAddress | null,
  /** Inline rates of a session being created, not kept until it is. */
  pendingRates: readonly Stripe.ShippingRate[] = [],
): Stripe.Checkout.Session.TotalDetails.Breakdown {
  const chosen = session.shipping_cost?.shipping_rate;
  const shippingRate =
    typeof chosen === "string"
      ? (pendingRates.find((rate) => rate.id === chosen) ?? retrieveShippingRate(ctx, chosen))
      : null;
  const taxing = session.automatic_tax.enabled && taxAddress !== null;
  const rate = taxing ? taxRateFor(taxAddress.country, taxAddress.state) : null;
  const priced = priceSession({
    lineSubtotals: lines.map((line) => line.amount_subtotal),
    lineInclusive: lines.map((line) => line.price?.tax_behavior === "inclusive"),
    shippingInclusive: shippingRate?.tax_behavior === "inclusive",
    shipping: shippingRate ? (shippingRate.fixed_amount?.amount ?? 0) : null,
    coupon: couponTerms(ctx, session),
    tax: rate ? { percentage: rate.percentage, taxesShipping: rate.taxesShipping } : null,
  });
  lines.forEach((line, index) => {
    const out = priced.lines[index];
    if (!out) return;
    Object.assign(line, {
      amount_discount: out.amountDiscount,
      amount_tax: out.amountTax,
      amount_total: out.amountTotal,
    });
  });
  session.amount_subtotal = priced.amountSubtotal;
  session.amount_total = priced.amountTotal;
  session.shipping_cost =
    shippingRate && priced.shipping
      ? {
          amount_subtotal: priced.shipping.amountSubtotal,
          amount_tax: priced.shipping.amountTax,
          amount_total: priced.shipping.amountTotal,
          shipping_rate: shippingRate.id,
        }
      : null;
  session.total_details = {
    amount_discount: priced.amountDiscount,
    amount_shipping: priced.amountShipping,
    amount_tax: priced.amountTax,
  };
  if (session.automatic_tax.enabled) {
    session.automatic_tax.status = taxing ? "complete" : "requires_location_inputs";
  }
  const discount = session.discounts?.[0];
  // One entry per rate and behaviour, as Stripe's breakdown lists an inclusive and an exclusive rate apart.
  const taxes = !rate
    ? []
    : [false, true].flatMap((inclusive) => {
        const taxed = priced.lines.filter((line) => line.inclusive === inclusive);
        const ship = priced.shipping && priced.shipping.inclusive === inclusive ? priced.shipping : null;
        if (taxed.length === 0 && !ship) return [];
        const shipTaxable =
          ship && rate.taxesShipping ? ship.amountSubtotal - (inclusive ? ship.amountTax : 0) : 0;
        return [
          {
            amount: taxed.reduce((sum, line) => sum + line.amountTax, 0) + (ship?.amountTax ?? 0),
            rate: taxRateObject(ctx, rate, inclusive),
            taxability_reason: "standard_rated" as const,
            taxable_amount: taxed.reduce((sum, line) => sum + line.taxableAmount, 0) + shipTaxable,
          },
        ];
      });
  return {
    discounts:
      discount && priced.amountDiscount > 0
        ? [{ amount: priced.amountDiscount, discount: discountObject(ctx, session, discount) }]
        : [],
    taxes,
  };
}

function discountObject(
  ctx: SandboxContext,
  session: Stripe.Checkout.Session,
  discount: Stripe.Checkout.Session.Discount,
): Stripe.Discount {
  const previous = ctx.store.data.breakdowns[session.id]?.discounts[0]?.discount;
  const couponId = typeof discount.coupon === "string" ? discount.coupon : (discount.coupon?.id ?? null);
  return {
    ...fromFixture("discount"),
    id: previous?.id ?? stripeId("di"),
    checkout_session: session.id,
    customer: null,
    end: null,
    promotion_code: discount.promotion_code,
    source: { coupon: couponId, type: "coupon" },
    start: previous?.start ?? unixSeconds(ctx.now()),
  } as Stripe.Discount;
}

const currencySymbols: Record<string, string> = {
  usd: "$",
  cad: "$",
  aud: "$",
  eur: "€",
  gbp: "£",
  jpy: "¥",
};

/**
 * Stripe refuses a payment below its minimum charge for the currency (a zero total excepted); the
 * table is the service's own (src/payments/minimum-charge.ts), so its check and this agree.
 */
export function checkMinimumCharge(session: Stripe.Checkout.Session): void {
  const currency = session.currency ?? "usd";
  const minimum = shortOfMinimumCharge(session.amount_total ?? 0, currency);
  if (minimum === null) return;
  throw stripeErrors.invalidRequest(
    "amount_too_small",
    `The Checkout Session's total amount due must add up to at least ${currencySymbols[currency] ?? ""}${minorToMajorText(minimum, currency)} ${currency}`,
  );
}
