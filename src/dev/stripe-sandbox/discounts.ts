import { randomBytes } from "node:crypto";
import type Stripe from "stripe";
import type { SandboxContext } from "./context";
import { unixSeconds } from "./context";
import { stripeErrors } from "./errors";
import { fromFixture } from "./fixtures";
import type { Params } from "./form";
import { optionalHash, optionalInteger, optionalString, requiredString, stringMap } from "./form";
import { stripeId } from "./ids";
import type { CouponTerms } from "./pricing";

/**
 * Coupons and promotion codes, created through the API as stripe-node creates them
 * (`stripe.coupons.create`, `stripe.promotionCodes.create`), and their use at Checkout. For a
 * one-time payment a coupon's `duration` changes nothing (it applies once), as in Stripe.
 */

const couponId = (): string =>
  Array.from(randomBytes(8), (byte) => "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[byte % 36]).join("");

function isNumber(value: string): boolean {
  return /^\d+(\.\d+)?$/.test(value);
}

export function createCoupon(ctx: SandboxContext, params: Params): Stripe.Coupon {
  const percentText = optionalString(params, "percent_off");
  const amountOff = optionalInteger(params, "amount_off");
  if ((percentText === undefined) === (amountOff === undefined)) {
    throw stripeErrors.invalidRequest(
      "parameter_missing",
      "You must pass exactly one of `percent_off` or `amount_off`.",
    );
  }
  let percentOff: number | null = null;
  if (percentText !== undefined) {
    percentOff = Number(percentText);
    if (!isNumber(percentText) || percentOff <= 0 || percentOff > 100) {
      throw stripeErrors.invalidParam(
        "percent_off",
        "Invalid percent_off: must be greater than 0 and less than or equal to 100",
        "parameter_invalid_float",
      );
    }
  }
  const currency = optionalString(params, "currency")?.toLowerCase() ?? null;
  if (amountOff !== undefined) {
    if (amountOff <= 0)
      throw stripeErrors.invalidParam(
        "amount_off",
        "This value must be greater than 0.",
        "parameter_invalid_integer",
      );
    if (!currency) throw stripeErrors.missingParam("currency");
  }
  const duration = optionalString(params, "duration") ?? "once";
  if (!["once", "forever", "repeating"].includes(duration)) {
    throw stripeErrors.invalidParam(
      "duration",
      "Invalid duration: must be one of forever, once, or repeating",
    );
  }
  const durationInMonths = optionalInteger(params, "duration_in_months") ?? null;
  if (duration === "repeating" && durationInMonths === null)
    throw stripeErrors.missingParam("duration_in_months");
  const id = optionalString(params, "id") ?? couponId();
  if (ctx.store.data.coupons[id]) {
    throw stripeErrors.invalidRequest("resource_already_exists", "Coupon already exists.", "id");
  }
  const coupon: Stripe.Coupon = {
    ...fromFixture("coupon"),
    id,
    amount_off: amountOff ?? null,
    currency: amountOff !== undefined ? currency : null,
    created: unixSeconds(ctx.now()),
    duration: duration as Stripe.Coupon.Duration,
    duration_in_months: duration === "repeating" ? durationInMonths : null,
    max_redemptions: optionalInteger(params, "max_redemptions") ?? null,
    metadata: stringMap(params, "metadata"),
    name: optionalString(params, "name") ?? null,
    percent_off: percentOff,
    redeem_by: optionalInteger(params, "redeem_by") ?? null,
    times_redeemed: 0,
    valid: true,
  };
  ctx.store.data.coupons[id] = coupon;
  return coupon;
}

/** `valid` as Stripe computes it: not past `redeem_by`, not redeemed `max_redemptions` times. */
function refreshValidity(ctx: SandboxContext, coupon: Stripe.Coupon): Stripe.Coupon {
  const expired = coupon.redeem_by !== null && coupon.redeem_by <= unixSeconds(ctx.now());
  const exhausted = coupon.max_redemptions !== null && coupon.times_redeemed >= coupon.max_redemptions;
  coupon.valid = !expired && !exhausted;
  return coupon;
}

export function retrieveCoupon(ctx: SandboxContext, id: string, param = "id"): Stripe.Coupon {
  const coupon = ctx.store.data.coupons[id];
  if (!coupon) throw stripeErrors.resourceMissing("coupon", id, param);
  return refreshValidity(ctx, coupon);
}

export function createPromotionCode(ctx: SandboxContext, params: Params): Stripe.PromotionCode {
  const promotion = optionalHash(params, "promotion");
  if (!promotion) throw stripeErrors.missingParam("promotion");
  if (requiredString(promotion, "type", "promotion[type]") !== "coupon") {
    throw stripeErrors.invalidParam("promotion[type]", "Invalid promotion[type]: must be coupon");
  }
  const coupon = retrieveCoupon(
    ctx,
    requiredString(promotion, "coupon", "promotion[coupon]"),
    "promotion[coupon]",
  );
  const code = optionalString(params, "code") ?? couponId();
  const taken = Object.values(ctx.store.data.promotionCodes).some(
    (existing) => existing.active && existing.code.toUpperCase() === code.toUpperCase(),
  );
  if (taken) {
    throw stripeErrors.invalidRequest(
      "resource_already_exists",
      "An active promotion code with `code` already exists.",
      "code",
    );
  }
  const restrictions = optionalHash(params, "restrictions");
  const minimumAmount = restrictions ? (optionalInteger(restrictions, "minimum_amount") ?? null) : null;
  const promotionCode: Stripe.PromotionCode = {
    ...fromFixture("promotion_code"),
    id: stripeId("promo"),
    active: optionalString(params, "active") !== "false",
    code,
    created: unixSeconds(ctx.now()),
    customer: optionalString(params, "customer") ?? null,
    expires_at: optionalInteger(params, "expires_at") ?? null,
    max_redemptions: optionalInteger(params, "max_redemptions") ?? null,
    metadata: stringMap(params, "metadata"),
    promotion: { coupon: coupon.id, type: "coupon" },
    restrictions: {
      first_time_transaction: restrictions?.first_time_transaction === "true",
      minimum_amount: minimumAmount,
      minimum_amount_currency:
        minimumAmount === null
          ? null
          : (optionalString(restrictions ?? {}, "minimum_amount_currency") ?? null),
    },
    times_redeemed: 0,
  };
  ctx.store.data.promotionCodes[promotionCode.id] = promotionCode;
  return promotionCode;
}

export function retrievePromotionCode(ctx: SandboxContext, id: string, param = "id"): Stripe.PromotionCode {
  const promotionCode = ctx.store.data.promotionCodes[id];
  if (!promotionCode) throw stripeErrors.resourceMissing("promotion_code", id, param);
  return promotionCode;
}

export function listPromotionCodes(
  ctx: SandboxContext,
  params: Params,
): Stripe.ApiList<Stripe.PromotionCode> {
  const code = optionalString(params, "code");
  const active = optionalString(params, "active");
  const data = Object.values(ctx.store.data.promotionCodes)
    .filter((entry) => code === undefined || entry.code.toUpperCase() === code.toUpperCase())
    .filter((entry) => active === undefined || String(entry.active) === active)
    .reverse();
  return { object: "list", data, has_more: false, url: "/v1/promotion_codes" };
}

/** Why a promotion code cannot be redeemed now, in the words Checkout's page shows; null when it can. */
export function promotionCodeProblem(
  ctx: SandboxContext,
  promotionCode: Stripe.PromotionCode,
  order: { subtotal: number; currency: string },
): string | null {
  const coupon = retrieveCoupon(ctx, couponOf(promotionCode));
  const now = unixSeconds(ctx.now());
  if (promotionCode.expires_at !== null && promotionCode.expires_at <= now) return "This code has expired.";
  if (coupon.redeem_by !== null && coupon.redeem_by <= now) return "This code has expired.";
  if (!promotionCode.active || !coupon.valid) return "This code is invalid.";
  if (promotionCode.max_redemptions !== null && promotionCode.times_redeemed >= promotionCode.max_redemptions)
    return "This code is invalid.";
  if (coupon.amount_off !== null && coupon.currency !== order.currency) return "This code is invalid.";
  const minimum = promotionCode.restrictions.minimum_amount;
  if (minimum !== null && order.subtotal < minimum) return "This code is not valid for this order amount.";
  return null;
}

export function couponOf(promotionCode: Stripe.PromotionCode): string {
  const coupon = promotionCode.promotion.coupon;
  return typeof coupon === "string" ? coupon : (coupon?.id ?? "");
}

/** The pricing terms of the session's discount (one at most, as in Checkout). */
export function couponTerms(ctx: SandboxContext, session: Stripe.Checkout.Session): CouponTerms | null {
  const discount = session.discounts?.[0];
  if (!discount) return null;
  const id = typeof discount.coupon === "string" ? discount.coupon : discount.coupon?.id;
  if (!id) return null;
  const coupon = retrieveCoupon(ctx, id);
  return { percentOff: coupon.percent_off, amountOff: coupon.amount_off };
}

/** A completed session redeems its discount once (coupon and promotion code `times_redeemed`). */
export function redeemDiscount(ctx: SandboxContext, session: Stripe.Checkout.Session): void {
  const discount = session.discounts?.[0];
  if (!discount) return;
  const couponId = typeof discount.coupon === "string" ? discount.coupon : discount.coupon?.id;
  const coupon = couponId ? ctx.store.data.coupons[couponId] : undefined;
  if (coupon) coupon.times_redeemed += 1;
  const promoId =
    typeof discount.promotion_code === "string" ? discount.promotion_code : discount.promotion_code?.id;
  const promotionCode = promoId ? ctx.store.data.promotionCodes[promoId] : undefined;
  if (promotionCode) promotionCode.times_redeemed += 1;
}
