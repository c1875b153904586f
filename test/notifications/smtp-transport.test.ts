import net from "node:net";
import type { ParsedMail } from "mailparser";
import nodemailer from "nodemailer";
import { createSmtpTransport } from "../../src/notifications/smtp-transport";
import type { EmailTransport, OutgoingEmail } from "../../src/notifications/email-transport";
import { startSmtpReceiver, type SmtpReceiver } from "../support/smtp-receiver";

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
  let server: SmtpReceiver;
  let transport: EmailTransport;
  beforeAll(async () => {
    server = await startSmtpReceiver();
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
    const [theirs, ours] = server.accepted.slice(-2) as [ParsedMail, ParsedMail];
    expect(ours.messageId).toBe("<ours@shop.example>");
    expect(server.envelopes.get("<ours@shop.example>")).toEqual({
      mailFrom: "orders@shop.example",
      rcptTo: ["ada@customer.example"],
    });
    const view = (mail: ParsedMail) => ({
      envelope: server.envelopes.get(mail.messageId ?? ""),
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
    expect(server.accepted.at(-1)?.messageId).toBe("<counted@shop.example>");
  });
});
