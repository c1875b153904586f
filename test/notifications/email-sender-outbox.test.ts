import { createServer, type AddressInfo } from "node:net";
import { sqlPool } from "../../src/db/client";
import { createLogger } from "../../src/logger";
import { createEmailSender, type GiveUpNotifier } from "../../src/notifications/email-sender";
import { messageIdFor } from "../../src/notifications/message-id";
import { createSmtpTransport } from "../../src/notifications/smtp-transport";
import { shipped } from "../../src/notifications/templates";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { eventually } from "../support/eventually";
import { startSmtpReceiver, type SmtpReceiver } from "../support/smtp-receiver";

// Mutation testing (docs/mutation-testing.md, group `email`): behaviour of the e-mail sender and
// its outbox that the first mutation pass showed no test pinned down.

const from = "Shop <orders@shop.example>";
const logger = createLogger({ level: "silent" });

/** A loopback port with nothing listening on it (taken from the OS, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("e-mail sender and outbox: behaviour no other test pinned down", () => {
  let database: TestDatabase;
  let receiver: SmtpReceiver;

  beforeAll(async () => {
    database = await createTestDatabase();
    receiver = await startSmtpReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await database.drop();
  });
  beforeEach(async () => {
    // The outbox is the whole table: each test starts from an empty one.
    await database.db.emailMessage.deleteMany();
  });

  async function createOrder(): Promise<string> {
    const order = await database.db.order.create({
      data: { customerId: "cus_outbox", email: "buyer@example.com", currency: "usd", total: 2500 },
    });
    return order.id;
  }

  function shippedRequest(orderId: string) {
    return {
      idempotencyKey: `shipped-${orderId}`,
      orderId,
      template: "shipped" as const,
      to: "buyer@example.com",
      content: shipped({
        order: {
          orderId,
          currency: "usd",
          total: 2500,
          lines: [{ name: "Mug", quantity: 1, unitPrice: 2500 }],
        },
        carrier: "USPS",
        trackingNumber: "SBX123",
        trackingUrl: "https://shop.example/track/SBX123",
      }),
    };
  }

  const row = (idempotencyKey: string) =>
    database.db.emailMessage.findUniqueOrThrow({ where: { idempotencyKey } });

  it("gives up at once when the retry window has run out, alerts ops with the e-mail's details, and a direct send later still delivers it", async () => {
    const clock = new Date("2026-12-05T10:00:00Z");
    const alerts: Parameters<GiveUpNotifier>[0][] = [];
    const down = createSmtpTransport(`smtp://127.0.0.1:${await closedPort()}`);
    const failing = createEmailSender({
      db: database.db,
      transport: down,
      from,
      logger,
      now: () => clock,
      // EMAIL_RETRY_FOR=0: the first failure is already at the end of the window.
      retry: { giveUpAfterMs: 0, firstRetryAfterMs: 60_000, maxRetryAfterMs: 3600_000 },
      onGiveUp: async (email) => {
        alerts.push(email);
      },
    });
    const orderId = await createOrder();
    const request = shippedRequest(orderId);
    const messageId = `<shipped-${orderId}@shop.example>`;
    try {
      expect(await failing.send(request)).toEqual({ status: "undeliverable", messageId });
    } finally {
      down.close();
    }

    expect(alerts).toEqual([
      {
        idempotencyKey: request.idempotencyKey,
        orderId,
        template: "shipped",
        attempts: 1,
        error: expect.stringMatching(/ECONNREFUSED/),
      },
    ]);
    expect(await row(request.idempotencyKey)).toMatchObject({
      status: "failed",
      gaveUpAt: clock,
      nextAttemptAt: null,
      leaseUntil: null,
    });
    // The outbox leaves a given-up e-mail alone ...
    expect(await failing.drain()).toEqual({ sent: 0, retrying: 0, gaveUp: 0 });

    // ... but a direct send (a re-sent step, the ops console's resend) is an explicit new attempt.
    const up = createSmtpTransport(receiver.url);
    try {
      const sender = createEmailSender({ db: database.db, transport: up, from, logger });
      expect(await sender.send(request)).toEqual({ status: "sent", messageId });
    } finally {
      up.close();
    }
    expect(receiver.accepted.filter((mail) => mail.messageId === messageId)).toHaveLength(1);
    expect(await row(request.idempotencyKey)).toMatchObject({
      status: "sent",
      error: null,
      gaveUpAt: null,
      nextAttemptAt: null,
      attempts: 2,
    });
  });

  it("a sender wired without a give-up notifier still gives up cleanly: undeliverable, recorded, nothing thrown", async () => {
    const clock = new Date("2026-12-05T10:00:00Z");
    const down = createSmtpTransport(`smtp://127.0.0.1:${await closedPort()}`);
    // onGiveUp is optional (a worker without ops alerting); giving up must not depend on it.
    const failing = createEmailSender({
      db: database.db,
      transport: down,
      from,
      logger,
      now: () => clock,
      retry: { giveUpAfterMs: 0, firstRetryAfterMs: 60_000, maxRetryAfterMs: 3600_000 },
    });
    const orderId = await createOrder();
    const request = shippedRequest(orderId);
    try {
      expect(await failing.send(request)).toEqual({
        status: "undeliverable",
        messageId: `<shipped-${orderId}@shop.example>`,
      });
    } finally {
      down.close();
    }
    expect(await row(request.idempotencyKey)).toMatchObject({
      status: "failed",
      gaveUpAt: clock,
      nextAttemptAt: null,
      leaseUntil: null,
      attempts: 1,
    });
  });

  it("the outbox sends the longest-due e-mails first, at most `limit` per drain, and passes over a claim with no rendered message", async () => {
    let clock = new Date("2026-12-05T10:00:00Z");
    const transport = createSmtpTransport(receiver.url);
    const sender = createEmailSender({ db: database.db, transport, from, logger, now: () => clock });
    try {
      // Three e-mails refused by the server ten minutes apart: queued, due one minute later each.
      const keys: string[] = [];
      for (const minutes of [0, 10, 20]) {
        clock = new Date(Date.parse("2026-12-05T10:00:00Z") + minutes * 60_000);
        const request = shippedRequest(await createOrder());
        receiver.refuseNext(1);
        expect(await sender.send(request)).toMatchObject({ status: "queued" });
        keys.push(request.idempotencyKey);
      }
      // A claim whose attempt died before it stored the rendered message: nothing the outbox can send.
      const orphanOrder = await createOrder();
      await database.db.emailMessage.create({
        data: {
          idempotencyKey: `cancelled-${orphanOrder}`,
          orderId: orphanOrder,
          template: "orderCancelled",
          recipient: "buyer@example.com",
          messageId: messageIdFor(`cancelled-${orphanOrder}`, from),
          createdAt: new Date("2026-12-05T09:00:00Z"),
        },
      });

      clock = new Date("2026-12-05T11:00:00Z");
      expect(await sender.drain({ limit: 1 })).toEqual({ sent: 1, retrying: 0, gaveUp: 0 });
      expect((await row(keys[0] ?? "")).status).toBe("sent");
      expect((await row(keys[1] ?? "")).status).toBe("failed");

      expect(await sender.drain()).toEqual({ sent: 2, retrying: 0, gaveUp: 0 });
      expect(await Promise.all(keys.map(async (key) => (await row(key)).status))).toEqual([
        "sent",
        "sent",
        "sent",
      ]);
      expect(await row(`cancelled-${orphanOrder}`)).toMatchObject({ status: "pending", attempts: 0 });
    } finally {
      transport.close();
    }
  });

  it("an attempt holds its e-mail for two minutes on the sender's clock, a direct send's and the outbox's alike", async () => {
    let clock = new Date("2026-12-05T10:00:00Z");
    const smtp = createSmtpTransport(receiver.url);
    const request = shippedRequest(await createOrder());
    // What the row's lease says while each attempt talks to the mail server; the first is refused.
    const leases: (Date | null)[] = [];
    const transport = {
      kind: "smtp" as const,
      send: async (email: Parameters<typeof smtp.send>[0]) => {
        leases.push((await row(request.idempotencyKey)).leaseUntil);
        if (leases.length === 1) throw new Error("421 4.3.2 try again later");
        return smtp.send(email);
      },
      close: () => smtp.close(),
    };
    const sender = createEmailSender({ db: database.db, transport, from, logger, now: () => clock });
    try {
      expect(await sender.send(request)).toMatchObject({ status: "queued" });
      clock = new Date("2026-12-05T11:00:00Z");
      expect(await sender.drain()).toEqual({ sent: 1, retrying: 0, gaveUp: 0 });

      expect(leases).toEqual([new Date("2026-12-05T10:02:00Z"), new Date("2026-12-05T11:02:00Z")]);
      expect(await row(request.idempotencyKey)).toMatchObject({ status: "sent", leaseUntil: null });
    } finally {
      transport.close();
    }
  });

  it("a second attempt for a key another attempt holds waits for it and answers already-sent once it is recorded", async () => {
    const transport = createSmtpTransport(receiver.url);
    const sender = createEmailSender({ db: database.db, transport, from, logger });
    const orderId = await createOrder();
    const request = shippedRequest(orderId);
    const messageId = messageIdFor(request.idempotencyKey, from);
    // The holder: claimed, rendered and leased, talking to the mail server right now.
    await database.db.emailMessage.create({
      data: {
        idempotencyKey: request.idempotencyKey,
        orderId,
        template: "shipped",
        recipient: "buyer@example.com",
        messageId,
        subject: request.content.subject,
        bodyText: request.content.text,
        bodyHtml: request.content.html,
        attempts: 1,
        leaseUntil: new Date(Date.now() + 120_000),
      },
    });
    // The second attempt's look at the row it found leased: the sign that it is waiting.
    const pool = sqlPool(database.db);
    const query = jest.spyOn(pool, "query");
    const waitingLooks = () =>
      query.mock.calls.filter(
        ([text, values]) =>
          typeof text === "string" &&
          text.startsWith("SELECT status::text AS status") &&
          Array.isArray(values) &&
          values[0] === request.idempotencyKey,
      ).length;
    try {
      const second = sender.send(request);
      // The holder finishes while the second attempt waits: once it has looked and found it held.
      await eventually("the second attempt waits for the holder", () => waitingLooks() > 0);
      await database.db.emailMessage.update({
        where: { idempotencyKey: request.idempotencyKey },
        data: { status: "sent", sentAt: new Date(), leaseUntil: null },
      });

      expect(await second).toEqual({ status: "already-sent", messageId });
      expect(receiver.accepted.filter((mail) => mail.messageId === messageId)).toHaveLength(0);
      expect((await row(request.idempotencyKey)).attempts).toBe(1);
    } finally {
      query.mockRestore();
      transport.close();
    }
  });

  it("a second attempt answers queued, sending nothing, when the holder's lease outlives its wait", async () => {
    const transport = createSmtpTransport(receiver.url);
    const sender = createEmailSender({ db: database.db, transport, from, logger });
    const orderId = await createOrder();
    const request = shippedRequest(orderId);
    const messageId = messageIdFor(request.idempotencyKey, from);
    await database.db.emailMessage.create({
      data: {
        idempotencyKey: request.idempotencyKey,
        orderId,
        template: "shipped",
        recipient: "buyer@example.com",
        messageId,
        subject: request.content.subject,
        bodyText: request.content.text,
        bodyHtml: request.content.html,
        attempts: 1,
        leaseUntil: new Date(Date.now() + 120_000),
      },
    });
    try {
      expect(await sender.send(request)).toEqual({ status: "queued", messageId });
      expect(receiver.accepted.filter((mail) => mail.messageId === messageId)).toHaveLength(0);
      expect(await row(request.idempotencyKey)).toMatchObject({ status: "pending", attempts: 1 });
    } finally {
      transport.close();
    }
  });
});
