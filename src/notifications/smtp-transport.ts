import nodemailer from "nodemailer";
import type { EmailTransport } from "./email-transport";

/**
 * Timeouts well below a workflow step's patience: an unreachable SMTP server should fail the
 * attempt (and let the step retry) rather than hold the e-mail row locked for minutes.
 */
const timeouts = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

export function createSmtpTransport(smtpUrl: string): EmailTransport {
  const transporter = nodemailer.createTransport({ url: smtpUrl, ...timeouts });
  return {
    kind: "smtp",
    async send(email) {
      const info = await transporter.sendMail({
        messageId: email.messageId,
        from: email.from,
        to: email.to,
        subject: email.subject,
        text: email.text,
        html: email.html,
      });
      // The server's final reply ("250 2.0.0 Ok: queued as 4F2B1") is the only handle it gives us.
      return { providerMessageId: info.response };
    },
    close() {
      transporter.close();
    },
  };
}
