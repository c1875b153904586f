import { isAppError } from "../../src/errors";
import { createSecretBox, deriveWebhookSecretsKey } from "../../src/webhooks/secret-box";

const key = "a-webhook-secrets-key-of-32-characters";
const secret = "whsec_" + Buffer.alloc(32, 3).toString("base64");
const endpointId = "0b8f9f1e-2d6c-4a53-9d0e-3f6a1c2b7e10";

/** Decision 0205: the endpoints' signing secrets sealed with AES-256-GCM, bound to their endpoint. */
describe("webhook secret box", () => {
  const box = createSecretBox(key);

  it("seals a secret so the stored value holds nothing of it, and opens it again", () => {
    const sealed = box.seal(secret, endpointId);
    expect(sealed).toMatch(/^enc:v1:[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(box.isSealed(sealed)).toBe(true);
    expect(box.open(sealed, endpointId)).toBe(secret);
    // A fresh IV each time: the same secret never seals to the same text.
    expect(box.seal(secret, endpointId)).not.toBe(sealed);
  });

  it("passes a secret stored in clear before encryption through (the migration path)", () => {
    expect(box.isSealed(secret)).toBe(false);
    expect(box.open(secret, endpointId)).toBe(secret);
  });

  it("refuses, naming the key and not the secret, another key, another endpoint's row, or a changed byte", () => {
    const sealed = box.seal(secret, endpointId);
    const tampered = sealed.slice(0, -2) + (sealed.endsWith("AA") ? "BB" : "AA");
    const attempts = [
      () => createSecretBox("another-webhook-secrets-key-of-32-chars").open(sealed, endpointId),
      () => box.open(sealed, "5a4e0d3c-1b2a-4987-8c6d-5e4f3a2b1c0d"),
      () => box.open(tampered, endpointId),
    ];
    for (const attempt of attempts) {
      let caught: unknown;
      try {
        attempt();
      } catch (error) {
        caught = error;
      }
      expect(isAppError(caught)).toBe(true);
      expect((caught as Error).message).toMatch(/WEBHOOK_SECRETS_KEY/);
      expect((caught as Error).message).not.toContain(secret);
    }
  });

  it("derives a stable development key from the admin token, different per token", () => {
    expect(deriveWebhookSecretsKey("admin-token-0123456789")).toBe(
      deriveWebhookSecretsKey("admin-token-0123456789"),
    );
    expect(deriveWebhookSecretsKey("admin-token-0123456789")).not.toBe(
      deriveWebhookSecretsKey("admin-token-9876543210"),
    );
    expect(deriveWebhookSecretsKey("admin-token-0123456789").length).toBeGreaterThanOrEqual(32);
  });
});
