import { createHmac } from "node:crypto";
import { carrierSignature, verifyCarrierSignature } from "../../src/shipping/carrier-signature";

const secret = "carrier-secret-0123456789";
const body = Buffer.from('{"trackingNumber":"SBX1","status":"delivered"}');

describe("carrier signature", () => {
  it("is t=<unix seconds>,v1=<hex HMAC-SHA256 of '<t>.<raw body>'>", () => {
    const now = Date.UTC(2026, 11, 1, 9, 30);
    const t = Math.floor(now / 1000);
    const expected = createHmac("sha256", secret).update(`${t}.${body.toString()}`).digest("hex");
    expect(carrierSignature(body, secret, now)).toBe(`t=${t},v1=${expected}`);
    expect(verifyCarrierSignature(body, `t=${t},v1=${expected}`, secret, { nowMs: now })).toBe(true);
    expect(verifyCarrierSignature(body, `t=${t},v1=${expected.toUpperCase()}`, secret, { nowMs: now })).toBe(
      true,
    );
  });

  it("rejects a missing, malformed, truncated or foreign signature", () => {
    const good = carrierSignature(body, secret);
    for (const header of [
      undefined,
      "",
      good.slice(0, -1),
      `${good}00`,
      good.replace(/v1=./, "v1=z"),
      carrierSignature(body, "another-secret-0123456789"),
      carrierSignature(Buffer.from(`${body.toString()} `), secret),
    ]) {
      expect(verifyCarrierSignature(body, header, secret)).toBe(false);
    }
    expect(verifyCarrierSignature(body, carrierSignature(body, ""), "")).toBe(false);
  });

  // Issue 14 (Low): "The carrier signature has no timestamp: a captured notice can be replayed forever."
  it("issue 14: refuses a replayed notice, signed longer ago than the tolerance, and a bare digest without a timestamp", () => {
    const captured = carrierSignature(body, secret, Date.now() - 10 * 60 * 1000);
    expect(verifyCarrierSignature(body, captured, secret)).toBe(false);
    const fromTheFuture = carrierSignature(body, secret, Date.now() + 10 * 60 * 1000);
    expect(verifyCarrierSignature(body, fromTheFuture, secret)).toBe(false);
    const bare = createHmac("sha256", secret).update(body).digest("hex");
    expect(verifyCarrierSignature(body, bare, secret)).toBe(false);
    expect(verifyCarrierSignature(body, `sha256=${bare}`, secret)).toBe(false);
    // Within the tolerance a retry of the same notice is still accepted.
    expect(verifyCarrierSignature(body, carrierSignature(body, secret, Date.now() - 60_000), secret)).toBe(
      true,
    );
  });
});
