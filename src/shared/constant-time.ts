import { createHash, timingSafeEqual } from "node:crypto";

const digest = (value: string | Uint8Array) => createHash("sha256").update(value).digest();

/**
 * Whether a secret someone sent (a token, a MAC, a signature) equals the expected one, in a time
 * that tells nothing about either: both sides are hashed to 32 bytes, then compared with
 * crypto.timingSafeEqual. Hashing first means no early return on a length mismatch (which would
 * tell an attacker the length) and no throw from timingSafeEqual on unequal lengths.
 * Node's timingSafeEqual is the primitive; the packages wrapping it (tsscmp, safe-compare) are
 * unmaintained and add nothing but this, so the one wrapper is ours.
 */
export function secretsEqual(given: string | Uint8Array, expected: string | Uint8Array): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}
