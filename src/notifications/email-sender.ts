import type { Database } from "../db/client";
import type { Logger } from "../logger";
import type { EmailTransport } from "./email-transport";
import { messageIdFor } from "./message-id";
import type { EmailContent, EmailTemplateName } from "./templates";

export interface SendEmailRequest {
  /** shipped-<orderId>, review-<orderId>, payment-failed-<orderId>, out-of-stock-<orderId>, cancelled-<orderId> */
  idempotencyKey: string;
  orderId?: string;
  template: EmailTemplateName;
  to: string;
  content: EmailContent;
}

export type SendEmailResult = { status: "sent" | "already-sent"; messageId: string };

export interface EmailSender {
  send(request: SendEmailRequest): Promise<SendEmailResult>;
}

/**
 * Long enough for the SMTP timeouts in smtp-transport.ts plus a concurrent attempt's wait for the
 * row lock; past it Prisma rolls back and the step fails, to be retried.
 */
const sendTransactionTimeoutMs = 60_000;

interface ClaimedRow {
  id: string;
  status: "pending" | "sent" | "failed";
  message_id: string;
}

/**
 * Sends each e-mail once per idempotency key.
 *
 * 1. Claim: insert the key as a `pending` row (ON CONFLICT DO NOTHING). The row exists, committed,
 *    before any byte goes to the mail server.
 * 2. Lock the row (SELECT ... FOR UPDATE) for the duration of the attempt, so two concurrent attempts
 *    for one key (a retried step racing its predecessor) run one after the other: the second sees
 *    `sent` and sends nothing.
 * 3. `sent` → nothing to do. `pending` or `failed` → a previous attempt crashed or failed: send
 *    (again) with the Message-ID stored at claim time, then record `sent` with the provider's id.
 *    A failure is recorded as `failed` with its message and rethrown, so the step retries.
 *
 * The window that remains: the mail server has accepted the message but the process dies (or the
 * database is unreachable) before `sent` is committed. The row stays `pending`/the lock is dropped,
 * and the next attempt sends again. That repeat carries the same Message-ID, derived from the key,
 * so a receiving system that deduplicates on Message-ID (many do, and mail clients thread by it)
 * drops or collapses it. Closing the window entirely would need a transactional outbox at the
 * provider, which SMTP does not offer.
 */
export function createEmailSender(deps: {
  db: Database;
  transport: EmailTransport;
  from: string;
  logger: Logger;
}): EmailSender {
  const { db, transport, from, logger } = deps;

  return {
    async send(request) {
      const log = logger.child({
        idempotencyKey: request.idempotencyKey,
        template: request.template,
        orderId: request.orderId,
      });

      const claim = await db.emailMessage.createMany({
        data: [
          {
            idempotencyKey: request.idempotencyKey,
            orderId: request.orderId ?? null,
            template: request.template,
            recipient: request.to,
            messageId: messageIdFor(request.idempotencyKey, from),
          },
        ],
        skipDuplicates: true,
      });

      const outcome = await db.$transaction(
        async (tx) => {
          const [row] = await tx.$queryRaw<ClaimedRow[]>`
            SELECT id, status::text AS status, message_id FROM email_messages
            WHERE idempotency_key = ${request.idempotencyKey} FOR UPDATE`;
          if (!row) throw new Error(`email ${request.idempotencyKey}: claimed row disappeared`);
          if (row.status === "sent") {
            return { result: { status: "already-sent", messageId: row.message_id } as const };
          }
          if (claim.count === 0) {
            // An earlier attempt claimed the key and crashed or failed (or claimed it a moment ago and
            // has not taken the lock yet); either way this attempt sends, and that one will find `sent`.
            log.warn(
              { previousStatus: row.status },
              "sending an e-mail whose key an earlier attempt claimed without recording it as sent",
            );
          }

          try {
            const receipt = await transport.send({
              messageId: row.message_id,
              from,
              to: request.to,
              subject: request.content.subject,
              text: request.content.text,
              html: request.content.html,
            });
            await tx.emailMessage.update({
              where: { id: row.id },
              data: {
                status: "sent",
                providerMessageId: receipt.providerMessageId,
                sentAt: new Date(),
                error: null,
              },
            });
            return { result: { status: "sent", messageId: row.message_id } as const };
          } catch (error) {
            // Recorded inside the transaction and committed with it; the error is rethrown after.
            const message = error instanceof Error ? error.message : String(error);
            await tx.emailMessage.update({
              where: { id: row.id },
              data: { status: "failed", error: message.slice(0, 2000) },
            });
            return { failure: error };
          }
        },
        { timeout: sendTransactionTimeoutMs, maxWait: 10_000 },
      );

      if ("failure" in outcome) {
        log.error({ err: outcome.failure, transport: transport.kind }, "e-mail could not be sent");
        throw outcome.failure;
      }
      if (outcome.result.status === "sent") {
        log.info({ messageId: outcome.result.messageId, transport: transport.kind }, "e-mail sent");
      } else {
        log.info({ messageId: outcome.result.messageId }, "e-mail already sent; nothing to do");
      }
      return outcome.result;
    },
  };
}
