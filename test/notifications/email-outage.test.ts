import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { createDatabase, type Database } from "../../src/db/client";
import { createLogger } from "../../src/logger";
import { createEmailSender } from "../../src/notifications/email-sender";
import { createSmtpTransport } from "../../src/notifications/smtp-transport";
import { shipped } from "../../src/notifications/templates";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { startSmtpReceiver } from "../support/smtp-receiver";

const from = "Shop <orders@shop.example>";
const logger = createLogger({ level: "silent" });

/** Accepts TCP connections and never says a word: a mail server that hangs. */
async function startSilentServer(): Promise<{ url: string; connections: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = { connections: 0 };
  const server: Server = createServer((socket) => {
    state.connections += 1;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port with nothing listening on it (taken from the OS, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function eventually(check: () => void | Promise<void>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

describe("e-mail outside transactions and through SMTP outages", () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  async function createOrder(db: Database): Promise<string> {
    const order = await db.order.create({
      data: { customerId: "cus_outage", email: "buyer@example.com", currency: "usd", total: 2500 },
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

  it("e-mail over SMTP inside a database transaction: a mail server that never answers holds no connection", async () => {
    // A pool as small as production's is large compared with its load: two connections.
    const db = createDatabase(database.url, { maxConnections: 2 });
    const silent = await startSilentServer();
    const transport = createSmtpTransport(silent.url);
    const sender = createEmailSender({ db, transport, from, logger });
    try {
      const orders = await Promise.all([1, 2, 3, 4].map(() => createOrder(db)));
      const settled: string[] = [];
      const sends = orders.map((orderId) =>
        sender.send(shippedRequest(orderId)).finally(() => settled.push(orderId)),
      );
      await eventually(() => expect(silent.connections).toBe(4));

      // Every send is now waiting on the mail server; the database serves everyone else meanwhile.
      const answered = await Promise.all(
        Array.from({ length: 10 }, () => db.product.count().then(() => "answered")),
      );
      expect(answered).toEqual(Array(10).fill("answered"));
      expect(settled).toEqual([]);
      const rows = await db.emailMessage.findMany({ where: { orderId: { in: orders } } });
      expect(rows.map((row) => row.status)).toEqual(["pending", "pending", "pending", "pending"]);
      expect(rows.every((row) => row.leaseUntil !== null)).toBe(true);

      // The server goes away: every send ends as queued for the outbox, none as an error.
      await silent.close();
      const results = await Promise.all(sends);
      expect(results.map((result) => result.status)).toEqual(["queued", "queued", "queued", "queued"]);
    } finally {
      transport.close();
      await silent.close();
      await db.$disconnect();
    }
  });

  it("an e-mail lost to an SMTP outage is never sent: it is sent once when SMTP is back", async () => {
    const port = await closedPort();
    let clock = new Date("2026-12-05T10:00:00Z");
    const alerts: unknown[] = [];
    const transport = createSmtpTransport(`smtp://127.0.0.1:${port}`);
    const sender = createEmailSender({
      db: database.db,
      transport,
      from,
      logger,
      now: () => clock,
      onGiveUp: async (email) => {
        alerts.push(email);
      },
    });
    // The outbox is the whole table: start from an empty one.
    await database.db.emailMessage.deleteMany();
    const orderId = await createOrder(database.db);
    const request = shippedRequest(orderId);
    const row = () =>
      database.db.emailMessage.findUniqueOrThrow({ where: { idempotencyKey: request.idempotencyKey } });

    try {
      // The workflow's own attempt: SMTP is down, the step is told `queued` and the run goes on.
      expect(await sender.send(request)).toMatchObject({ status: "queued" });

      // Six hours of outage: the outbox retries with growing delays, never before they are due.
      const retryTimes: number[] = [];
      for (let minutes = 0; minutes <= 6 * 60; minutes += 1) {
        clock = new Date(Date.parse("2026-12-05T10:00:00Z") + minutes * 60_000);
        const drained = await sender.drain();
        if (drained.retrying > 0) retryTimes.push(minutes);
      }
      const delays = retryTimes.map((at, i) => at - (retryTimes[i - 1] ?? 0));
      expect(delays.slice(0, 5)).toEqual([1, 2, 4, 8, 16]);
      expect(Math.max(...delays)).toBe(60);
      expect(await row()).toMatchObject({ status: "failed", sentAt: null, gaveUpAt: null });
      expect(alerts).toEqual([]);

      // SMTP is back (same address): the next due drain sends it, once.
      const receiver = await startSmtpReceiver({ port });
      try {
        clock = new Date(clock.getTime() + 60 * 60_000);
        expect(await sender.drain()).toEqual({ sent: 1, retrying: 0, gaveUp: 0 });
        expect(await sender.drain()).toEqual({ sent: 0, retrying: 0, gaveUp: 0 });
        expect(await sender.send(request)).toMatchObject({ status: "already-sent" });
        expect(receiver.accepted.map((mail) => mail.messageId)).toEqual([
          `<shipped-${orderId}@shop.example>`,
        ]);
        expect(await row()).toMatchObject({ status: "sent", error: null, leaseUntil: null });
      } finally {
        // The transport pools its connections: it holds one open to the receiver until closed, and
        // the receiver's close waits for its open connections.
        transport.close();
        await receiver.close();
      }
    } finally {
      transport.close();
    }
  });

  it("an e-mail lost to an SMTP outage: after EMAIL_RETRY_FOR the outbox gives up and alerts ops", async () => {
    const port = await closedPort();
    const start = Date.parse("2026-12-05T10:00:00Z");
    let clock = new Date(start);
    const alerts: { idempotencyKey: string; template: string }[] = [];
    const transport = createSmtpTransport(`smtp://127.0.0.1:${port}`);
    const sender = createEmailSender({
      db: database.db,
      transport,
      from,
      logger,
      now: () => clock,
      retry: { giveUpAfterMs: 3 * 3600_000, firstRetryAfterMs: 60_000, maxRetryAfterMs: 3600_000 },
      onGiveUp: async (email) => {
        alerts.push(email);
      },
    });
    // The outbox is the whole table: start from an empty one.
    await database.db.emailMessage.deleteMany();
    const orderId = await createOrder(database.db);
    const request = shippedRequest(orderId);
    try {
      expect(await sender.send(request)).toMatchObject({ status: "queued" });
      let gaveUp = 0;
      for (let minutes = 1; minutes <= 5 * 60; minutes += 1) {
        clock = new Date(start + minutes * 60_000);
        gaveUp += (await sender.drain()).gaveUp;
      }
      expect(gaveUp).toBe(1);
      expect(alerts).toEqual([
        expect.objectContaining({ idempotencyKey: request.idempotencyKey, template: "shipped" }),
      ]);
      const row = await database.db.emailMessage.findUniqueOrThrow({
        where: { idempotencyKey: request.idempotencyKey },
      });
      expect(row.gaveUpAt).not.toBeNull();
      expect(row.status).toBe("failed");
    } finally {
      transport.close();
    }
  });
});
