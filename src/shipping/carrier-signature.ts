import { createHmac, timingSafeEqual } from "node:crypto";

/** The X-Carrier-Signature value for a body: HMAC-SHA256 of the raw bytes, hex encoded. */
export function carrierSignature(rawBody: Buffer, secret: string): string {
  return createHmac("sha256", secret).update(rawBody).digest("hex");
}

const hexDigest = /^(?:sha256=)?([0-9a-fA-F]{64})$/;

/**
 * Checks X-Carrier-Signature against the raw body. The header is plain hex (a `sha256=` prefix is
 * tolerated). Anything that is not exactly a 32-byte hex digest is rejected before comparing, and
 * the comparison itself is constant-time.
 */
export function verifyCarrierSignature(rawBody: Buffer, header: string | undefined, secret: string): boolean {
  if (header === undefined || secret.length === 0) return false;
  const match = hexDigest.exec(header.trim());
  if (!match?.[1]) return false;
  const given = Buffer.from(match[1], "hex");
  const expected = createHmac("sha256", secret).update(rawBody).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}
