import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import nodemailer from "nodemailer";
import type { EmailTransport } from "./email-transport";

/** A file name from the Message-ID, so a re-sent message overwrites its earlier copy. */
function fileNameFor(messageId: string): string {
  return `${messageId.replace(/^<|>$/g, "").replace(/[^A-Za-z0-9._@-]/g, "_")}.eml`;
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
      const file = path.join(directory, fileNameFor(email.messageId));
      // Written aside and renamed, so a reader never sees half a message.
      const partial = `${file}.partial`;
      await writeFile(partial, info.message, { mode: 0o600 });
      await rename(partial, file);
      return { providerMessageId: file };
    },
    close() {
      composer.close();
    },
  };
}
