import nodemailer from "nodemailer";
import MailComposer from "nodemailer/lib/mail-composer";
import type { EmailTransport } from "./email-transport";

/**
 * Timeouts well below a workflow step's patience: an unreachable SMTP server should fail the
 * attempt (and let the step retry) rather than hold the e-mail row locked for minutes.
 */
const timeouts = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/**
 * Pooled: every order sends at least two e-mails, and a new connection (TCP, greeting, EHLO) per
 * e-mail was most of nodemailer's cost in the profile (docs/benchmarks.md). The pool opens up to
 * five connections as sends overlap (one per concurrent send below that, as before) and reuses
 * them. A connection that cannot be made fails its message at once (the outbox retries it later);
 * one that drops mid-send is retried by the pool on a new connection (nodemailer's default, at most
 * 5 times, 50 ms to 2 s apart; a resend carries the same Message-ID, as the outbox's does). A silent
 * or unreachable server still ends each attempt within the timeouts above.
 */
export function createSmtpTransport(smtpUrl: string): EmailTransport {
  const transporter = nodemailer.createTransport({ url: smtpUrl, pool: true, ...timeouts });
  return {
    kind: "smtp",
    async send(email) {
      // Composed whole, then handed to the pool as one buffer: streamed, nodemailer writes each
      // MIME part, header block and line run to the socket on its own (12 writes a message against
      // 3, half of the app's socket writes per order: docs/benchmarks.md). Our e-mails are a few KB,
      // so holding one in memory costs nothing; the message and its envelope are nodemailer's own,
      // as sendMail would compose them.
      const message = new MailComposer({
        messageId: email.messageId,
        from: email.from,
        to: email.to,
        subject: email.subject,
        text: email.text,
        html: email.html,
      }).compile();
      const info = await transporter.sendMail({
        envelope: message.getEnvelope(),
        raw: await message.build(),
      });
      // The server's final reply ("250 2.0.0 Ok: queued as 4F2B1") is the only handle it gives us.
      return { providerMessageId: info.response };
    },
    close() {
      transporter.close();
    },
  };
}
