import { link, mkdir, unlink, writeFile } from "node:fs/promises";
import { randomUUID } from "node:crypto";
import path from "node:path";
import nodemailer from "nodemailer";
import type { EmailTransport } from "./email-transport";

/**
 * A file name from the Message-ID; a second write under the same Message-ID (a step that sent and
 * crashed before recording it, say) gets `.2.eml`, `.3.eml`...: every write stays visible, so a
 * duplicate e-mail shows in development as it would in a customer's inbox.
 */
function fileNameFor(messageId: string, copy: number): string {
  const base = messageId.replace(/^<|>$/g, "").replace(/[^A-Za-z0-9._@-]/g, "_");
  return copy === 1 ? `${base}.eml` : `${base}.${copy}.eml`;
}

/**
 * Development stand-in for SMTP: nodemailer builds the real RFC 822 message and we write it to
 * <dir>/<message-id>.eml, which any mail client opens.
 */
export function createOutboxTransport(directory: string): EmailTransport {
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "windows" });
  return {
    kind: "outbox",
    async send(email) {
      const info = await composer.sendMail({
        messageId: email.messageId,
        from: email.from,
        to: email.to,
        subject: email.subject,
        text: email.text,
        html: email.html,
      });
      if (!Buffer.isBuffer(info.message)) throw new Error("outbox: nodemailer did not return a buffer");
      // Customers' mail: readable by this user only (folder 0700, files 0600).
      await mkdir(directory, { recursive: true, mode: 0o700 });
      // Written aside and linked into place (link fails rather than replace an existing file), so a
      // reader never sees half a message and no earlier copy is overwritten.
      const partial = path.join(directory, `.${randomUUID()}.partial`);
      await writeFile(partial, info.message, { mode: 0o600 });
      try {
        for (let copy = 1; ; copy += 1) {
          const file = path.join(directory, fileNameFor(email.messageId, copy));
          try {
            await link(partial, file);
            return { providerMessageId: file };
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
          }
        }
      } finally {
        await unlink(partial);
      }
    },
    close() {
      composer.close();
    },
  };
}
