import type { Database } from "../db/client";
import { AppError } from "../errors";
import type { Timeline } from "../timeline/timeline";
import type { EmailRenderer } from "./email-renderer";
import type { EmailSender, SendEmailResult } from "./email-sender";
import { emailTemplates, type EmailTemplateName } from "./templates";

export interface ResendResult {
  orderId: string;
  emailId: string;
  /** The e-mail row of this re-send (its own key and Message-ID). */
  /** `queued` when the mail server could not take it now: the e-mail outbox retries it. */
  resentAs: { idempotencyKey: string; messageId: string; status: SendEmailResult["status"] };
}

const isTemplate = (name: string): name is EmailTemplateName => name in emailTemplates;

/**
 * Re-send, from the admin API or the console: one of an order's e-mails again, on purpose: a new e-mail row under the key
 * `<original key>-resend-<n>` (so the idempotent sender does not swallow it as a repeat, and
 * two clicks racing for the same n send once), rendered from the order's current record.
 */
export async function resendOrderEmail(
  deps: { db: Database; sender: EmailSender; renderer: EmailRenderer; timeline: Pick<Timeline, "record"> },
  { orderId, emailId, by }: { orderId: string; emailId: string; by: string },
): Promise<ResendResult> {
  const original = await deps.db.emailMessage.findFirst({ where: { id: emailId, orderId } });
  if (!original) throw new AppError("not_found", `Order ${orderId} has no e-mail ${emailId}`);
  if (!isTemplate(original.template)) {
    throw new AppError(
      "conflict",
      `E-mail ${emailId} uses template ${original.template}, which no longer exists`,
    );
  }
  const baseKey = original.idempotencyKey.replace(/-resend-\d+$/, "");
  const earlier = await deps.db.emailMessage.count({
    where: { idempotencyKey: { startsWith: `${baseKey}-resend-` } },
  });
  const idempotencyKey = `${baseKey}-resend-${earlier + 1}`;
  const content = await deps.renderer.render(orderId, original.template);
  const sent = await deps.sender.send({
    idempotencyKey,
    orderId,
    template: original.template,
    to: original.recipient,
    content,
  });
  await deps.timeline.record(orderId, "email-resent", {
    template: original.template,
    of: original.idempotencyKey,
    as: idempotencyKey,
    by,
  });
  return { orderId, emailId, resentAs: { idempotencyKey, ...sent } };
}
