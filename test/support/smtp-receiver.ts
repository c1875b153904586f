import type { AddressInfo } from "node:net";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface SmtpReceiver {
  url: string;
  /** Messages the server accepted, parsed. */
  accepted: ParsedMail[];
  /** The SMTP envelope each accepted message came in, by its Message-ID. */
  envelopes: Map<string, { mailFrom: string | false; rcptTo: string[] }>;
  /** Messages the server received and then refused with a 451. */
  refused: ParsedMail[];
  /** The next `count` messages are refused after their data has been read. */
  refuseNext(count: number): void;
  close(): Promise<void>;
}

/** A real SMTP server on a free port that keeps what it receives, standing in for the mail provider. */
export async function startSmtpReceiver(options: { port?: number } = {}): Promise<SmtpReceiver> {
  const accepted: ParsedMail[] = [];
  const refused: ParsedMail[] = [];
  const envelopes: SmtpReceiver["envelopes"] = new Map();
  let toRefuse = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (mail) => {
          if (toRefuse > 0) {
            toRefuse -= 1;
            refused.push(mail);
            callback(Object.assign(new Error("Mailbox temporarily unavailable"), { responseCode: 451 }));
            return;
          }
          accepted.push(mail);
          if (mail.messageId)
            envelopes.set(mail.messageId, {
              mailFrom: session.envelope.mailFrom && session.envelope.mailFrom.address,
              rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            });
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    accepted,
    envelopes,
    refused,
    refuseNext(count) {
      toRefuse = count;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
