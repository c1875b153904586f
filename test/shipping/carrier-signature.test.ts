import { createHmac } from "node:crypto";
import { carrierSignature, verifyCarrierSignature } from "../../src/shipping/carrier-signature";

const secret = "carrier-secret-0123456789";
const body = Buffer.from('{"trackingNumber":"SBX1","status":"delivered"}');

describe("carrier signature", () => {
  it("is the hex HMAC-SHA256 of the raw body", () => {
    const expected = createHmac("sha256", secret).update(body).digest("hex");
    expect(carrierSignature(body, secret)).toBe(expected);
    expect(verifyCarrierSignature(body, expected, secret)).toBe(true);
    expect(verifyCarrierSignature(body, expected.toUpperCase(), secret)).toBe(true);
    expect(verifyCarrierSignature(body, `sha256=${expected}`, secret)).toBe(true);
  });

  it("rejects a missing, malformed, truncated or foreign signature", () => {
    const good = carrierSignature(body, secret);
    for (const header of [
      undefined,
      "",
      good.slice(0, 63),
      `${good}00`,
      good.replace(/^./, "z"),
      carrierSignature(body, "another-secret-0123456789"),
      carrierSignature(Buffer.from(`${body.toString()} `), secret),
    ]) {
      expect(verifyCarrierSignature(body, header, secret)).toBe(false);
    }
    expect(verifyCarrierSignature(body, carrierSignature(body, ""), "")).toBe(false);
  });
});
