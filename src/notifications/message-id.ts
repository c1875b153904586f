import { createHash } from "node:crypto";

const dotAtom = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/** The domain of the sender address ("Shop <orders@shop.example>" gives "shop.example"). */
export function senderDomain(from: string): string {
  const match = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from.trim());
  return match?.[1]?.toLowerCase() ?? "localhost";
}

/**
 * The Message-ID of an e-mail, derived from its idempotency key alone: every attempt to send one
 * e-mail carries the same header, which is what lets a receiver drop a repeat. Keys that are not
 * valid as the left part of a Message-ID are hashed.
 */
export function messageIdFor(idempotencyKey: string, from: string): string {
  const local =
    dotAtom.test(idempotencyKey) && idempotencyKey.length <= 128
      ? idempotencyKey
      : createHash("sha256").update(idempotencyKey).digest("hex").slice(0, 40);
  return `<${local}@${senderDomain(from)}>`;
}
