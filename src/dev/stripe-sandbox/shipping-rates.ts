import type Stripe from "stripe";
import type { SandboxContext } from "./context";
import { unixSeconds } from "./context";
import { stripeErrors } from "./errors";
import { fromFixture } from "./fixtures";
import type { Params } from "./form";
import { optionalHash, optionalInteger, optionalString, requiredString, stringMap } from "./form";
import { stripeId } from "./ids";

/**
 * Shipping Rates (`stripe.shippingRates.create`) and Checkout's inline `shipping_rate_data`,
 * which Stripe turns into a Shipping Rate object of its own, as here. Only `fixed_amount` exists.
 */

const estimateUnits = ["business_day", "day", "hour", "month", "week"];

function estimateBound(
  hash: Params | undefined,
  label: string,
): Stripe.ShippingRate.DeliveryEstimate.Maximum | null {
  if (!hash) return null;
  const unit = requiredString(hash, "unit", `${label}[unit]`);
  if (!estimateUnits.includes(unit)) {
    throw stripeErrors.invalidParam(
      `${label}[unit]`,
      `Invalid ${label}[unit]: must be one of business_day, day, hour, month, or week`,
    );
  }
  const value = optionalInteger(hash, "value", `${label}[value]`);
  if (value === undefined) throw stripeErrors.missingParam(`${label}[value]`);
  if (value < 1)
    throw stripeErrors.invalidParam(
      `${label}[value]`,
      "This value must be greater than or equal to 1.",
      "parameter_invalid_integer",
    );
  return { unit: unit as Stripe.ShippingRate.DeliveryEstimate.Maximum.Unit, value };
}

/** `label` names the hash in errors: "" for the endpoint, `shipping_options[0][shipping_rate_data]` inline. */
export function createShippingRate(
  ctx: SandboxContext,
  params: Params,
  label = "",
  save = true,
): Stripe.ShippingRate {
  const name = (field: string) => (label ? `${label}[${field}]` : field);
  const displayName = requiredString(params, "display_name", name("display_name"));
  const type = optionalString(params, "type") ?? "fixed_amount";
  if (type !== "fixed_amount") {
    throw stripeErrors.invalidParam(name("type"), `Invalid ${name("type")}: must be fixed_amount`);
  }
  const fixed = optionalHash(params, "fixed_amount");
  if (!fixed) throw stripeErrors.missingParam(name("fixed_amount"));
  const amountLabel = `${name("fixed_amount")}[amount]`;
  const amount = optionalInteger(fixed, "amount", amountLabel);
  if (amount === undefined) throw stripeErrors.missingParam(amountLabel);
  if (amount < 0)
    throw stripeErrors.invalidParam(
      amountLabel,
      "This value must be greater than or equal to 0.",
      "parameter_invalid_integer",
    );
  const currency = requiredString(fixed, "currency", `${name("fixed_amount")}[currency]`).toLowerCase();
  const estimate = optionalHash(params, "delivery_estimate");
  const taxBehavior = optionalString(params, "tax_behavior") ?? "unspecified";
  if (!["exclusive", "inclusive", "unspecified"].includes(taxBehavior)) {
    throw stripeErrors.invalidParam(
      name("tax_behavior"),
      `Invalid ${name("tax_behavior")}: must be one of exclusive, inclusive, or unspecified`,
    );
  }
  const rate: Stripe.ShippingRate = {
    ...fromFixture("shipping_rate"),
    id: stripeId("shr"),
    active: true,
    created: unixSeconds(ctx.now()),
    delivery_estimate: estimate
      ? {
          minimum: estimateBound(optionalHash(estimate, "minimum"), `${name("delivery_estimate")}[minimum]`),
          maximum: estimateBound(optionalHash(estimate, "maximum"), `${name("delivery_estimate")}[maximum]`),
        }
      : null,
    display_name: displayName,
    fixed_amount: { amount, currency },
    metadata: stringMap(params, "metadata"),
    tax_behavior: taxBehavior as Stripe.ShippingRate.TaxBehavior,
    tax_code: optionalString(params, "tax_code") ?? null,
    type: "fixed_amount",
  };
  if (save) ctx.store.data.shippingRates[rate.id] = rate;
  return rate;
}

export function retrieveShippingRate(ctx: SandboxContext, id: string, param = "id"): Stripe.ShippingRate {
  const rate = ctx.store.data.shippingRates[id];
  if (!rate) throw stripeErrors.resourceMissing("shipping_rate", id, param);
  return rate;
}
