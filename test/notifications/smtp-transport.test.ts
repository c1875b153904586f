import net, { type AddressInfo } from "node:net";
import { simpleParser, type ParsedMail } from "mailparser";
import nodemailer from "nodemailer";
import { SMTPServer } from "smtp-server";
import { createSmtpTransport } from "../../src/notifications/smtp-transport";
import type { EmailTransport, OutgoingEmail } from "../../src/notifications/email-transport";

interface Received {
  mailFrom: string | false;
  rcptTo: string[];
  mail: ParsedMail;
}

/** A real SMTP server that keeps each message with the envelope it came in. */
async function startServer(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (mail) => {
          received.push({
            mailFrom: session.envelope.mailFrom && session.envelope.mailFrom.address,
            rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            mail,
          });
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const email = (messageId: string): OutgoingEmail => ({
  messageId,
  from: '"Shöp Örders" <orders@shop.example>',
  to: "Ada Lovelace <ada@customer.example>",
  subject: "Your order is on its way — 1 parcel",
  text: `Tracking: https://shop.example/track/SBX123\n${"A line of text. ".repeat(300)}`,
  html: `<p>Tracking: <a href="https://shop.example/track/SBX123">SBX123</a></p>${"<p>A paragraph.</p>".repeat(300)}`,
});

type WriteGeneric = (this: net.Socket, ...args: unknown[]) => unknown;

describe("SMTP transport", () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  let transport: EmailTransport;
  beforeAll(async () => {
    server = await startServer();
    transport = createSmtpTransport(server.url);
  });
  afterAll(async () => {
    transport.close();
    await server.close();
  });

  it("sends the message and envelope nodemailer's own sendMail composes", async () => {
    const reference = nodemailer.createTransport({ url: server.url });
    const { messageId, ...fields } = email("<reference@shop.example>");
    await reference.sendMail({ ...fields, messageId });
    reference.close();
    const receipt = await transport.send(email("<ours@shop.example>"));

    expect(receipt.providerMessageId).toMatch(/^250 /);
    const [theirs, ours] = server.received.slice(-2) as [Received, Received];
    expect(ours.mail.messageId).toBe("<ours@shop.example>");
    expect({ mailFrom: ours.mailFrom, rcptTo: ours.rcptTo }).toEqual({
      mailFrom: "orders@shop.example",
      rcptTo: ["ada@customer.example"],
    });
    const view = ({ mailFrom, rcptTo, mail }: Received) => ({
      mailFrom,
      rcptTo,
      from: mail.from?.value,
      to: Array.isArray(mail.to) ? mail.to.map((to) => to.value) : mail.to?.value,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      contentType: (mail.headers.get("content-type") as { value?: string } | undefined)?.value,
      hasDate: mail.date instanceof Date,
    });
    expect(view(ours)).toEqual(view(theirs));
  });

  it("hands a message to the socket in one write, after the pipelined envelope", async () => {
    await transport.send(email("<warm-up@shop.example>")); // the pooled connection is open and greeted
    const prototype = net.Socket.prototype as unknown as { _writeGeneric: WriteGeneric };
    const original = prototype._writeGeneric;
    const clientWrites: string[] = [];
    const spy = jest.spyOn(prototype, "_writeGeneric").mockImplementation(function (
      this: net.Socket,
      ...args
    ) {
      if (!(this as net.Socket & { server?: unknown }).server)
        clientWrites.push(String(args[1]).slice(0, 40));
      return original.apply(this, args);
    });
    try {
      await transport.send(email("<counted@shop.example>"));
    } finally {
      spy.mockRestore();
    }
    // MAIL FROM, RCPT TO and DATA (one pipelined write), the message, the terminating dot. A
    // streamed message took 12 writes of a socket, one per header block and part.
    expect(clientWrites).toHaveLength(3);
    expect(server.received.at(-1)?.mail.messageId).toBe("<counted@shop.example>");
  });
});
