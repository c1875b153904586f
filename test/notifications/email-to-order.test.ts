import { createLogger } from "../../src/logger";
import {
  createEmailSender,
  type OrderEmailRequest,
  type OrderForEmail,
} from "../../src/notifications/email-sender";
import type { EmailTransport } from "../../src/notifications/email-transport";
import { messageIdFor } from "../../src/notifications/message-id";
import { createSmtpTransport } from "../../src/notifications/smtp-transport";
import { reviewRequest, toOrderSummary } from "../../src/notifications/templates";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { startSmtpReceiver, type SmtpReceiver } from "../support/smtp-receiver";

const from = "Shop <orders@shop.example>";
const logger = createLogger({ level: "silent" });

/**
 * sendToOrder: the order read in the claim's statement, the message rendered once the e-mail is
 * leased and stored with its outcome, the step's timeline entry in the outcome's statement.
 */
describe("an order's e-mail rendered after its claim", () => {
  let database: TestDatabase;
  let receiver: SmtpReceiver;
  let transport: EmailTransport;

  beforeAll(async () => {
    database = await createTestDatabase();
    await database.db.product.create({
      data: { sku: "MUG", name: "Mug", unitPrice: 2500, currency: "usd", stockOnHand: 5 },
    });
    receiver = await startSmtpReceiver();
    transport = createSmtpTransport(receiver.url);
  });
  afterAll(async () => {
    transport.close();
    await receiver.close();
    await database.drop();
  });

  async function createOrder(email = "buyer@example.com"): Promise<string> {
    const order = await database.db.order.create({
      data: {
        customerId: "cus_render",
        email,
        currency: "usd",
        total: 2500,
        lines: { create: [{ sku: "MUG", name: "Mug", unitPrice: 2500, quantity: 1 }] },
      },
    });
    return order.id;
  }

  const rendered: OrderForEmail[] = [];
  function request(orderId: string, runId = "run-1"): OrderEmailRequest {
    return {
      idempotencyKey: `review-${orderId}`,
      orderId,
      template: "reviewRequest",
      render: (order) => {
        rendered.push(order);
        return reviewRequest({
          order: toOrderSummary(order),
          reviewUrl: `https://shop.example/r/${order.id}`,
        });
      },
      entry: { kind: "confirmation-sent", runId, detail: (outcome) => ({ ...outcome }) },
    };
  }
  const row = (key: string) => database.db.emailMessage.findUniqueOrThrow({ where: { idempotencyKey: key } });
  const entries = (orderId: string) =>
    database.db.orderTimelineEntry.findMany({ where: { orderId, kind: "confirmation-sent" } });

  it("sends to the order's address what it renders from the order, stores it with `sent` and writes the entry", async () => {
    const sender = createEmailSender({ db: database.db, transport, from, logger });
    const orderId = await createOrder("reader@example.com");
    const messageId = messageIdFor(`review-${orderId}`, from);

    expect(await sender.sendToOrder(request(orderId))).toEqual({ status: "sent", messageId });

    expect(rendered.at(-1)).toEqual({
      id: orderId,
      email: "reader@example.com",
      currency: "usd",
      total: 2500,
      lines: [{ sku: "MUG", name: "Mug", unitPrice: 2500, quantity: 1 }],
    });
    const [mail] = receiver.accepted.filter((m) => m.messageId === messageId);
    expect(mail?.to).toMatchObject({ text: "reader@example.com" });
    const stored = await row(`review-${orderId}`);
    expect(stored).toMatchObject({ status: "sent", recipient: "reader@example.com", subject: mail?.subject });
    expect(stored.bodyText).toContain("Mug");
    expect((await entries(orderId)).map((e) => e.detail)).toEqual([
      { idempotencyKey: `review-${orderId}`, status: "sent", messageId },
    ]);

    // Again (a retried step): nothing sent, nothing rendered, the entry once.
    const renders = rendered.length;
    expect(await sender.sendToOrder(request(orderId))).toEqual({ status: "already-sent", messageId });
    expect(rendered).toHaveLength(renders);
    expect(receiver.accepted.filter((m) => m.messageId === messageId)).toHaveLength(1);
    expect(await entries(orderId)).toHaveLength(1);
  });

  it("an SMTP failure stores the rendered message with `failed`, and the outbox sends it", async () => {
    const down: EmailTransport = {
      kind: "smtp",
      send: async () => {
        throw new Error("connect ECONNREFUSED");
      },
      close() {},
    };
    let clock = new Date();
    const failing = createEmailSender({ db: database.db, transport: down, from, logger, now: () => clock });
    const orderId = await createOrder();
    const messageId = messageIdFor(`review-${orderId}`, from);

    expect(await failing.sendToOrder(request(orderId))).toEqual({ status: "queued", messageId });
    expect(await row(`review-${orderId}`)).toMatchObject({ status: "failed", subject: expect.any(String) });
    expect((await entries(orderId)).map((e) => e.detail)).toEqual([
      { idempotencyKey: `review-${orderId}`, status: "queued", messageId },
    ]);

    clock = new Date(clock.getTime() + 3600_000);
    const up = createEmailSender({ db: database.db, transport, from, logger, now: () => clock });
    await up.drain();
    const [mail] = receiver.accepted.filter((m) => m.messageId === messageId);
    expect(mail?.text).toContain("Mug");
  });

  it("an attempt that died before rendering: a retry inside its lease stores the message, the outbox sends it once", async () => {
    let clock = new Date();
    const sender = createEmailSender({ db: database.db, transport, from, logger, now: () => clock });
    const orderId = await createOrder();
    const key = `review-${orderId}`;
    const messageId = messageIdFor(key, from);
    // The claim of an attempt that died before it rendered: leased, no message stored.
    await database.db.emailMessage.create({
      data: {
        idempotencyKey: key,
        orderId,
        template: "reviewRequest",
        recipient: "buyer@example.com",
        messageId,
        attempts: 1,
        leaseUntil: new Date(clock.getTime() + 120_000),
      },
    });
    // The outbox cannot send what was never rendered.
    expect(await sender.drain()).toEqual({ sent: 0, retrying: 0, gaveUp: 0 });

    // The retry does not wait for the dead holder's lease: it answers queued, as for a live holder,
    // and leaves its render for the outbox.
    expect(await sender.sendToOrder(request(orderId))).toEqual({ status: "queued", messageId });
    expect(receiver.accepted.filter((m) => m.messageId === messageId)).toHaveLength(0);
    expect(await row(key)).toMatchObject({ status: "pending", attempts: 1, subject: expect.any(String) });

    clock = new Date(clock.getTime() + 121_000);
    expect((await sender.drain()).sent).toBe(1);
    const sent = receiver.accepted.filter((m) => m.messageId === messageId);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.text).toContain("Mug");
    expect(await sender.sendToOrder(request(orderId))).toEqual({ status: "already-sent", messageId });
    expect(receiver.accepted.filter((m) => m.messageId === messageId)).toHaveLength(1);
  });

  describe("with the order's move and its entry in the outcome's statement", () => {
    async function shippedOrder(): Promise<string> {
      const orderId = await createOrder();
      await database.db.order.update({ where: { id: orderId }, data: { status: "shipped" } });
      return orderId;
    }
    const status = async (orderId: string) =>
      (await database.db.order.findUniqueOrThrow({ where: { id: orderId } })).status;
    const reviewEntries = (orderId: string) =>
      database.db.orderTimelineEntry.findMany({ where: { orderId, kind: "review-requested" } });
    function moving(orderId: string, moves: string[]): OrderEmailRequest {
      return {
        ...request(orderId),
        entry: {
          kind: "review-requested",
          runId: "run-1",
          detail: (outcome) => ({ ...outcome, afterDelivery: true }),
        },
        move: { from: ["shipped", "delivered"], to: "completed", onMoved: () => moves.push("completed") },
      };
    }

    it("`sent` moves the order, writes the entry and tells onMoved once; a retry moves nothing again", async () => {
      const sender = createEmailSender({ db: database.db, transport, from, logger });
      const orderId = await shippedOrder();
      const messageId = messageIdFor(`review-${orderId}`, from);
      const moves: string[] = [];

      expect(await sender.sendToOrder(moving(orderId, moves))).toEqual({ status: "sent", messageId });
      expect(await status(orderId)).toBe("completed");
      expect(moves).toEqual(["completed"]);
      expect((await reviewEntries(orderId)).map((e) => [e.detail, e.runId])).toEqual([
        [{ idempotencyKey: `review-${orderId}`, status: "sent", messageId, afterDelivery: true }, "run-1"],
      ]);

      expect(await sender.sendToOrder(moving(orderId, moves))).toEqual({ status: "already-sent", messageId });
      expect(moves).toEqual(["completed"]);
      expect(await reviewEntries(orderId)).toHaveLength(1);
    });

    it("`failed` (queued for the outbox) moves the order and writes the entry as well", async () => {
      const down: EmailTransport = {
        kind: "smtp",
        send: async () => {
          throw new Error("connect ECONNREFUSED");
        },
        close() {},
      };
      const failing = createEmailSender({ db: database.db, transport: down, from, logger });
      const orderId = await shippedOrder();
      const moves: string[] = [];

      expect((await failing.sendToOrder(moving(orderId, moves))).status).toBe("queued");
      expect(await status(orderId)).toBe("completed");
      expect(moves).toEqual(["completed"]);
      expect((await reviewEntries(orderId)).map((e) => (e.detail as { status: string }).status)).toEqual([
        "queued",
      ]);
    });

    it("an e-mail sent by an earlier attempt that died before the move: the retry moves the order and writes the entry", async () => {
      const sender = createEmailSender({ db: database.db, transport, from, logger });
      const orderId = await shippedOrder();
      const messageId = messageIdFor(`review-${orderId}`, from);
      // The earlier attempt sent without the move (as a step before the move rode with the e-mail).
      expect((await sender.sendToOrder(request(orderId))).status).toBe("sent");
      expect(await status(orderId)).toBe("shipped");
      const moves: string[] = [];

      expect(await sender.sendToOrder(moving(orderId, moves))).toEqual({ status: "already-sent", messageId });
      expect(await status(orderId)).toBe("completed");
      expect(moves).toEqual(["completed"]);
      expect((await reviewEntries(orderId)).map((e) => (e.detail as { status: string }).status)).toEqual([
        "already-sent",
      ]);
    });

    it("an order not in a status it moves from stays where it is, and still gets the entry", async () => {
      const sender = createEmailSender({ db: database.db, transport, from, logger });
      const orderId = await createOrder();
      await database.db.order.update({ where: { id: orderId }, data: { status: "cancelled" } });
      const moves: string[] = [];

      expect((await sender.sendToOrder(moving(orderId, moves))).status).toBe("sent");
      expect(await status(orderId)).toBe("cancelled");
      expect(moves).toEqual([]);
      expect(await reviewEntries(orderId)).toHaveLength(1);
    });
  });

  it("an order that does not exist claims nothing", async () => {
    const sender = createEmailSender({ db: database.db, transport, from, logger });
    const orderId = "00000000-0000-4000-8000-000000000001";
    await expect(sender.sendToOrder(request(orderId))).rejects.toThrow(/not found/);
    expect(await database.db.emailMessage.count({ where: { idempotencyKey: `review-${orderId}` } })).toBe(0);
  });
});
