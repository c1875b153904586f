import { createLogger } from "../../src/logger";
import { createEmailSender, type EmailSender } from "../../src/notifications/email-sender";
import type { EmailTransport } from "../../src/notifications/email-transport";
import { messageIdFor } from "../../src/notifications/message-id";
import { createSmtpTransport } from "../../src/notifications/smtp-transport";
import { shipped } from "../../src/notifications/templates";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { startSmtpReceiver, type SmtpReceiver } from "../support/smtp-receiver";

const from = "Shop <orders@shop.example>";
const logger = createLogger({ level: "silent" });

describe("e-mail sender over a real SMTP server", () => {
  let database: TestDatabase;
  let receiver: SmtpReceiver;
  let transport: EmailTransport;
  let sender: EmailSender;

  beforeAll(async () => {
    database = await createTestDatabase();
    receiver = await startSmtpReceiver();
    transport = createSmtpTransport(receiver.url);
    sender = createEmailSender({ db: database.db, transport, from, logger });
  });
  afterAll(async () => {
    transport.close();
    await receiver.close();
    await database.drop();
  });

  async function createOrder(): Promise<string> {
    const order = await database.db.order.create({
      data: { customerId: "cus_mail", email: "buyer@example.com", currency: "usd", total: 2500 },
    });
    return order.id;
  }

  function shippedContent(orderId: string) {
    return shipped({
      order: {
        orderId,
        currency: "usd",
        total: 2500,
        lines: [{ name: "Mug", quantity: 1, unitPrice: 2500 }],
      },
      carrier: "USPS",
      trackingNumber: "SBX123",
      trackingUrl: "https://shop.example/track/SBX123",
    });
  }

  function received(messageId: string) {
    return receiver.accepted.filter((mail) => mail.messageId === messageId);
  }

  it("delivers the message with its subject, recipient and deterministic Message-ID, and records it", async () => {
    const orderId = await createOrder();
    const content = shippedContent(orderId);

    const result = await sender.send({
      idempotencyKey: `shipped-${orderId}`,
      orderId,
      template: "shipped",
      to: "buyer@example.com",
      content,
    });

    const messageId = `<shipped-${orderId}@shop.example>`;
    expect(result).toEqual({ status: "sent", messageId });
    const [mail] = received(messageId);
    expect(mail?.subject).toBe(content.subject);
    expect(mail?.to).toMatchObject({ value: [{ address: "buyer@example.com" }] });
    expect(mail?.from).toMatchObject({ value: [{ address: "orders@shop.example", name: "Shop" }] });
    expect(mail?.text).toContain("https://shop.example/track/SBX123");
    expect(mail?.html).toContain('href="https://shop.example/track/SBX123"');

    const row = await database.db.emailMessage.findUniqueOrThrow({
      where: { idempotencyKey: `shipped-${orderId}` },
    });
    expect(row).toMatchObject({ status: "sent", messageId, orderId, template: "shipped", error: null });
    expect(row.providerMessageId).toMatch(/^250 /);
    expect(row.sentAt).toBeInstanceOf(Date);
  });

  it("sends nothing the second time the same key is sent", async () => {
    const orderId = await createOrder();
    const request = {
      idempotencyKey: `review-${orderId}`,
      orderId,
      template: "reviewRequest" as const,
      to: "buyer@example.com",
      content: shippedContent(orderId),
    };

    const first = await sender.send(request);
    const second = await sender.send(request);

    expect(first.status).toBe("sent");
    expect(second).toEqual({ status: "already-sent", messageId: first.messageId });
    expect(received(first.messageId)).toHaveLength(1);
  });

  it("delivers one message when eight attempts with the same key race", async () => {
    const orderId = await createOrder();
    const request = {
      idempotencyKey: `payment-failed-${orderId}`,
      orderId,
      template: "paymentFailed" as const,
      to: "buyer@example.com",
      content: shippedContent(orderId),
    };

    const results = await Promise.all(Array.from({ length: 8 }, () => sender.send(request)));

    expect(results.filter((r) => r.status === "sent")).toHaveLength(1);
    expect(results.filter((r) => r.status === "already-sent")).toHaveLength(7);
    expect(received(`<payment-failed-${orderId}@shop.example>`)).toHaveLength(1);
    expect(await database.db.emailMessage.count({ where: { orderId } })).toBe(1);
  });

  it("records a refused message as failed, queued for the outbox, and re-sends it with the same Message-ID", async () => {
    const orderId = await createOrder();
    const request = {
      idempotencyKey: `out-of-stock-${orderId}`,
      orderId,
      template: "outOfStock" as const,
      to: "buyer@example.com",
      content: shippedContent(orderId),
    };
    const messageId = `<out-of-stock-${orderId}@shop.example>`;

    receiver.refuseNext(1);
    expect(await sender.send(request)).toEqual({ status: "queued", messageId });

    const failed = await database.db.emailMessage.findUniqueOrThrow({
      where: { idempotencyKey: request.idempotencyKey },
    });
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/451/);
    expect(failed.sentAt).toBeNull();
    expect(receiver.refused.map((mail) => mail.messageId)).toContain(messageId);

    const retry = await sender.send(request);

    expect(retry).toEqual({ status: "sent", messageId });
    expect(received(messageId)).toHaveLength(1);
    const sent = await database.db.emailMessage.findUniqueOrThrow({
      where: { idempotencyKey: request.idempotencyKey },
    });
    expect(sent).toMatchObject({ status: "sent", error: null });
  });

  it("sends a message whose key was claimed by an attempt that crashed before sending", async () => {
    const orderId = await createOrder();
    const idempotencyKey = `cancelled-${orderId}`;
    const messageId = messageIdFor(idempotencyKey, from);
    await database.db.emailMessage.create({
      data: {
        idempotencyKey,
        orderId,
        template: "orderCancelled",
        recipient: "buyer@example.com",
        messageId,
      },
    });

    const result = await sender.send({
      idempotencyKey,
      orderId,
      template: "orderCancelled",
      to: "buyer@example.com",
      content: shippedContent(orderId),
    });

    expect(result).toEqual({ status: "sent", messageId });
    expect(received(messageId)).toHaveLength(1);
  });

  it("repeats the same Message-ID when the process dies between sending and recording", async () => {
    const orderId = await createOrder();
    const request = {
      idempotencyKey: `shipped-${orderId}`,
      orderId,
      template: "shipped" as const,
      to: "buyer@example.com",
      content: shippedContent(orderId),
    };
    // Delivers, then fails as a crash would before the `sent` row is committed.
    const dyingTransport: EmailTransport = {
      kind: "smtp",
      async send(email) {
        await transport.send(email);
        throw new Error("process died after the server accepted the message");
      },
      close() {},
    };
    const dying = createEmailSender({ db: database.db, transport: dyingTransport, from, logger });

    expect(await dying.send(request)).toMatchObject({ status: "queued" });
    await sender.send(request);

    const copies = received(`<shipped-${orderId}@shop.example>`);
    expect(copies).toHaveLength(2);
    expect(new Set(copies.map((mail) => mail.messageId)).size).toBe(1);
  });
});
