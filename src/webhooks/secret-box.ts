import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";
import { AppError } from "../errors";

/**
 * Endpoint signing secrets at rest (decision 0205): AES-256-GCM under a key derived from
 * WEBHOOK_SECRETS_KEY. The secrets must be readable to sign (HMAC), so they are encrypted, not
 * hashed; a database dump or a replica alone no longer lets anyone forge our deliveries.
 *
 * Stored form: `enc:v1:<iv>.<tag>.<ciphertext>` (base64url). The endpoint's id is the associated
 * data, so a sealed secret copied onto another endpoint's row does not open there.
 */
const prefix = "enc:v1:";

export interface SecretBox {
  seal(plain: string, endpointId: string): string;
  /**
   * The secret in clear. A value without the prefix is a row written before encryption (the
   * migration path: it keeps working until the start-up re-seal encrypts it).
   */
  open(stored: string, endpointId: string): string;
  isSealed(stored: string): boolean;
}

export function createSecretBox(keyMaterial: string): SecretBox {
  // HKDF so a passphrase-like value becomes a uniform 256-bit key bound to this one use.
  const key = Buffer.from(
    hkdfSync("sha256", keyMaterial, "order-fulfillment", "webhook endpoint secrets v1", 32),
  );
  const isSealed = (stored: string) => stored.startsWith(prefix);
  return {
    isSealed,
    seal(plain, endpointId) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(endpointId, "utf8"));
      const ciphertext = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      const tag = cipher.getAuthTag();
      return `${prefix}${iv.toString("base64url")}.${tag.toString("base64url")}.${ciphertext.toString("base64url")}`;
    },
    open(stored, endpointId) {
      if (!isSealed(stored)) return stored;
      const [iv, tag, ciphertext] = stored.slice(prefix.length).split(".");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv ?? "", "base64url"));
        decipher.setAAD(Buffer.from(endpointId, "utf8"));
        decipher.setAuthTag(Buffer.from(tag ?? "", "base64url"));
        return Buffer.concat([
          decipher.update(Buffer.from(ciphertext ?? "", "base64url")),
          decipher.final(),
        ]).toString("utf8");
      } catch {
        // Never the value or the key in the message: only what to check.
        throw new AppError(
          "internal_error",
          `The signing secret of webhook endpoint ${endpointId} does not decrypt: WEBHOOK_SECRETS_KEY is not the key it was sealed with`,
        );
      }
    },
  };
}

/**
 * The key outside production when WEBHOOK_SECRETS_KEY is unset: derived from the admin token, as
 * the link-signing key is (development keeps its token in its secrets file, so the key is stable
 * across restarts). Production requires the variable (src/config.ts).
 */
export function deriveWebhookSecretsKey(adminToken: string): string {
  return createHash("sha256").update(`order-fulfillment webhook secrets\0${adminToken}`).digest("base64url");
}
