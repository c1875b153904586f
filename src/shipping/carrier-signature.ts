import { createHmac } from "node:crypto";
import { secretsEqual } from "../shared/constant-time";

/**
 * The sandbox carrier's own signature (development only; EasyPost signs with X-Hmac-Signature):
 * `X-Carrier-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`.
 * The timestamp is signed with the body, so a captured notice cannot be replayed once it is older
 * than the tolerance (the same scheme as Stripe-Signature).
 */
export const carrierSignatureToleranceSeconds = 300;

function digest(rawBody: Buffer, secret: string, timestamp: number): Buffer {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest();
}

/** The X-Carrier-Signature value for a body signed at `nowMs` (default: now). */
export function carrierSignature(rawBody: Buffer, secret: string, nowMs: number = Date.now()): string {
  const timestamp = Math.floor(nowMs / 1000);
  return `t=${timestamp},v1=${digest(rawBody, secret, timestamp).toString("hex")}`;
}

const headerFormat = /^t=(\d{1,12}),v1=([0-9a-fA-F]{64})$/;

/**
 * Checks X-Carrier-Signature against the raw body and the clock. Anything that is not exactly
 * `t=<digits>,v1=<64 hex>` is rejected before comparing (a bare digest, without a timestamp, too);
 * a timestamp further than the tolerance from now, in either direction, is rejected; the digest
 * comparison itself is constant-time.
 */
export function verifyCarrierSignature(
  rawBody: Buffer,
  header: string | undefined,
  secret: string,
  options: { nowMs?: number; toleranceSeconds?: number } = {},
): boolean {
  if (header === undefined || secret.length === 0) return false;
  const match = headerFormat.exec(header.trim());
  if (!match?.[1] || !match[2]) return false;
  const timestamp = Number(match[1]);
  const nowSeconds = Math.floor((options.nowMs ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - timestamp) > (options.toleranceSeconds ?? carrierSignatureToleranceSeconds)) {
    return false;
  }
  return secretsEqual(Buffer.from(match[2], "hex"), digest(rawBody, secret, timestamp));
}
