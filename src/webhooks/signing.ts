import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";

/** A new endpoint secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function newEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** The secrets an attempt signs with: the current one, and the previous one during its overlap. */
export function signingSecrets(
  endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: Date | null },
  now: Date,
): string[] {
  const previousValid =
    endpoint.previousSecret !== null &&
    endpoint.previousSecretExpiresAt !== null &&
    endpoint.previousSecretExpiresAt.getTime() > now.getTime();
  return previousValid && endpoint.previousSecret
    ? [endpoint.secret, endpoint.previousSecret]
    : [endpoint.secret];
}

/**
 * The three Standard Webhooks headers, signed by the `standardwebhooks` package itself so any of
 * its verifiers agree. With several secrets (a rotation's overlap) the signatures are joined with a
 * space, as the specification allows: a receiver holding either secret verifies.
 */
export function signedHeaders(
  secrets: string[],
  webhookId: string,
  timestamp: Date,
  body: string,
): { "webhook-id": string; "webhook-timestamp": string; "webhook-signature": string } {
  return {
    "webhook-id": webhookId,
    "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
    "webhook-signature": secrets
      .map((secret) => new Webhook(secret).sign(webhookId, timestamp, body))
      .join(" "),
  };
}
