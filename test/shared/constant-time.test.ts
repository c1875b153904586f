import { secretsEqual } from "../../src/shared/constant-time";

describe("secretsEqual", () => {
  it("is true for the same secret, as a string or as bytes", () => {
    expect(secretsEqual("token-0123456789", "token-0123456789")).toBe(true);
    expect(secretsEqual(Buffer.from("a1b2", "hex"), Buffer.from([0xa1, 0xb2]))).toBe(true);
  });

  it("is false for another secret, a prefix, a longer one or an empty one, and never throws on lengths", () => {
    expect(secretsEqual("token-0123456789", "token-0123456788")).toBe(false);
    expect(secretsEqual("token-012345678", "token-0123456789")).toBe(false);
    expect(secretsEqual("token-0123456789-and-more", "token-0123456789")).toBe(false);
    expect(secretsEqual("", "token-0123456789")).toBe(false);
    expect(secretsEqual(Buffer.alloc(0), Buffer.alloc(32))).toBe(false);
  });
});
