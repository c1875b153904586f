import { randomBytes } from "node:crypto";

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function base62(length: number): string {
  const bytes = randomBytes(length);
  let out = "";
  for (const byte of bytes) out += alphabet[byte % alphabet.length];
  return out;
}

/** Ids shaped like Stripe's (`pi_3Q…`, `cs_test_a1…`) so logs and code that sniff prefixes behave as in test mode. */
export function stripeId(
  prefix:
    | "cs_test"
    | "pi"
    | "ch"
    | "re"
    | "evt"
    | "req"
    | "pm"
    | "li"
    | "txn"
    | "dp"
    | "prv"
    | "cus"
    | "promo"
    | "shr"
    | "di",
): string {
  return prefix === "cs_test" ? `cs_test_a1${base62(56)}` : `${prefix}_3${base62(23)}`;
}
