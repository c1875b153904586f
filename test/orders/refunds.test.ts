import type Stripe from "stripe";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { buildApp } from "../../src/app";
import { createStripeSandbox, type StripeSandbox } from "../../src/dev/stripe-sandbox";
import { createDatabaseReadiness } from "../../src/health/readiness";
import { createLogger } from "../../src/logger";
import { createEmailSender } from "../../src/notifications/email-sender";
import type { EmailTransport, OutgoingEmail } from "../../src/notifications/email-transport";
import { orderAdminRoutes } from "../../src/orders/admin-routes";
import { createOrderActions } from "../../src/orders/order-actions";
import { createOrderQueries } from "../../src/orders/order-queries";
import { createOrderRepository } from "../../src/orders/order-repository";
import { createOrderRedrive } from "../../src/orders/redrive-order";
import { createHolds } from "../../src/orders/hold-order";
import { createRefunds } from "../../src/orders/refund-order";
import { createRefundEvents } from "../../src/orders/intake/refund-events";
import { createStripeCheckoutSessions } from "../../src/payments/stripe-checkout";
import { createStripeClient } from "../../src/payments/stripe-client";
import { createEmailRenderer } from "../../src/notifications/email-renderer";
import { createTimeline } from "../../src/timeline/timeline";
import { createTestDatabase, type TestDatabase } from "../support/database";

const adminToken = "refund-admin-token-0123456789";
const logger = createLogger({ level: "silent" });

/** POST /api/orders/:id/refund: refunds of an order that has already shipped. */
describe("POST /api/orders/:id/refund", () => {
  let database: TestDatabase;
  let sandbox: StripeSandbox;
  let server: Server;
  let url: string;
  let stripe: ReturnType<typeof createStripeClient>;
  const sent: OutgoingEmail[] = [];
  let sender: ReturnType<typeof createEmailSender>;

  beforeAll(async () => {
    database = await createTestDatabase();
    sandbox = createStripeSandbox({ webhookSecret: "whsec_refunds_0123456789", logger });
    stripe = createStripeClient({
      secretKey: "sk_test_refunds",
      apiBase: (await sandbox.listen(0)).url,
    });
    const transport: EmailTransport = {
      kind: "outbox",
      send: async (email) => {
        sent.push(email);
        return { providerMessageId: `outbox-${sent.length}` };
      },
      close: () => undefined,
    };
    sender = createEmailSender({
      db: database.db,
      transport,
      from: "Shop <orders@shop.example>",
      logger,
    });
    const app = buildApp({
      logger,
      readiness: await createDatabaseReadiness(database.db),
      orderAdmin: orderAdminRoutes({
        adminToken,
        actions: createOrderActions({
          db: database.db,
          orders: createOrderRepository(database.db),
          publisher: { publish: async () => undefined },
          timeline: createTimeline(database.db),
          redrive: createOrderRedrive(database.db),
          refunds: createRefunds({ db: database.db, stripe, sender, logger }),
          labels: {
            voidable: async () => false,
            voidShipment: async () => ({ outcome: "needs-ops", why: "not-voidable" }),
            isVoidable: () => false,
            handBackUnrecorded: async () => "needs-ops",
          },
          holds: createHolds({
            db: database.db,
            publisher: { publish: async () => undefined },
          }),
          sender,
          renderer: createEmailRenderer({
            db: database.db,
            links: { order: (id) => id, review: (id) => id, track: (n) => n, address: (id) => id },
          }),
          cancelWindowMs: 3_600_000,
        }),
        queries: createOrderQueries(database.db, createTimeline(database.db)),
      }),
    });
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await sandbox.close();
    await database.drop();
  });

  /** A shipped order whose 5,500 (usd minor units) were captured through the Stripe stand-in. */
  /** Stripe's refund webhook for a payment, as the intake handles it (given the refund use case, as production wires it). */
  function refundWebhook(paymentIntentId: string | null, refunds?: ReturnType<typeof createRefunds>) {
    const events = createRefundEvents({
      db: database.db,
      stripe,
      orders: createOrderRepository(database.db),
      publisher: { publish: async () => undefined },
      timeline: createTimeline(database.db),
      alerts: { notify: async () => undefined },
      logger,
      ...(refunds ? { refunds } : {}),
    });
    let deliveries = 0;
    return () =>
      events.handle({
        id: `evt_refund_${(deliveries += 1)}_${paymentIntentId}`,
        type: "charge.refunded",
        data: { object: { object: "charge", payment_intent: paymentIntentId } },
      } as unknown as Stripe.Event);
  }

  /** The Stripe client, with `then` run once each refund Stripe makes exists, before its answer returns. */
  function refundsCreateThen(then: () => Promise<void>): typeof stripe {
    return new Proxy(stripe, {
      get(target, key, receiver) {
        if (key !== "refunds") return Reflect.get(target, key, receiver) as unknown;
        return {
          ...target.refunds,
          list: target.refunds.list.bind(target.refunds),
          create: async (...args: Parameters<Stripe["refunds"]["create"]>) => {
            const created = await target.refunds.create(...args);
            await then();
            return created;
          },
        };
      },
    });
  }

  async function capturedOrder(total = 5500): Promise<string> {
    const order = await database.db.order.create({
      data: {
        customerId: "cus_refund",
        email: "refund@example.com",
        currency: "usd",
        total,
        status: "shipped",
        lines: { create: [] },
      },
    });
    const session = await createStripeCheckoutSessions(stripe, { captureMethod: "automatic" }).create({
      orderId: order.id,
      customerId: "cus_refund",
      email: "refund@example.com",
      currency: "usd",
      lines: [{ sku: "MUG", name: "Mug", unitPrice: total, quantity: 1 }],
      successUrl: "http://shop.test/ok",
      cancelUrl: "http://shop.test/cancel",
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    const done = await sandbox.completeCheckoutSession(session.id, "paid", { deliver: false });
    const paymentIntentId = done.paymentIntent?.id as string;
    await database.db.order.update({
      where: { id: order.id },
      data: { paymentIntentId, checkoutSessionId: session.id },
    });
    await database.db.payment.create({
      data: {
        orderId: order.id,
        providerId: paymentIntentId,
        status: "captured",
        currency: "usd",
        amountAuthorized: total,
        amountCaptured: total,
      },
    });
    return order.id;
  }

  const refund = (orderId: string, body: unknown, token = adminToken) =>
    fetch(`${url}/api/orders/${orderId}/refund`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });

  it("refunds part, then refuses a second refund that would exceed the capture with 409 refund_exceeds_captured", async () => {
    const orderId = await capturedOrder(5500);

    const first = await refund(orderId, { amount: 2000, reason: "Mug arrived chipped" });
    expect(first.status).toBe(201);
    const issued = (await first.json()) as Record<string, unknown>;
    expect(issued).toMatchObject({
      orderId,
      amount: 2000,
      status: "succeeded",
      captured: 5500,
      refunded: 2000,
      refundable: 3500,
    });

    const second = await refund(orderId, { amount: 4000 });
    expect(second.status).toBe(409);
    expect(await second.json()).toEqual({
      error: {
        code: "refund_exceeds_captured",
        message: expect.stringContaining("3500"),
        details: { requested: 4000, captured: 5500, refunded: 2000, refundable: 3500 },
      },
    });

    // Recorded on the payment, the refunds and the timeline; Stripe refunded exactly once.
    const order = await database.db.order.findUniqueOrThrow({
      where: { id: orderId },
      include: { payment: true, refunds: true, timeline: true },
    });
    expect(order.payment).toMatchObject({ status: "captured", amountRefunded: 2000 });
    expect(order.refunds).toEqual([
      expect.objectContaining({
        amount: 2000,
        status: "succeeded",
        reason: "Mug arrived chipped",
        providerId: issued.providerId,
      }),
    ]);
    expect(order.timeline.map((t) => t.kind)).toEqual(
      expect.arrayContaining(["refund-requested", "refund-issued"]),
    );
    const stripeRefunds = sandbox.requests.filter(
      (r) => r.endpoint === "refunds.create" && r.status === 200 && !r.replayed,
    );
    expect(stripeRefunds.filter((r) => r.params.payment_intent === order.paymentIntentId)).toHaveLength(1);
    expect(stripeRefunds.at(-1)?.idempotencyKey).toBe(`refund-${issued.refundId as string}`);
    // The customer hears about it, once.
    expect(
      sent.filter((m) => m.to === "refund@example.com" && /refund of \$20\.00/.test(m.subject)),
    ).toHaveLength(1);
  });

  it("refunds the rest when no amount is given, marks the payment refunded, then refuses any more", async () => {
    const orderId = await capturedOrder(3000);
    expect((await refund(orderId, { amount: 1000 })).status).toBe(201);

    const rest = await refund(orderId, {});
    expect(rest.status).toBe(201);
    expect(await rest.json()).toMatchObject({ amount: 2000, refunded: 3000, refundable: 0 });
    expect(await database.db.payment.findUniqueOrThrow({ where: { orderId } })).toMatchObject({
      status: "refunded",
      amountRefunded: 3000,
    });

    const more = await refund(orderId, { amount: 1 });
    expect(more.status).toBe(409);
    expect(((await more.json()) as { error: { code: string } }).error.code).toBe("refund_exceeds_captured");
  });

  it("a refund whose Stripe answer failed stays pending and is settled with its own key before the next one", async () => {
    const orderId = await capturedOrder(3000);
    sandbox.injectFailure("refunds.create", { kind: "server_error" });
    expect((await refund(orderId, { amount: 1000 })).status).toBe(502);
    expect(await database.db.refund.findMany({ where: { orderId } })).toEqual([
      expect.objectContaining({ status: "pending", amount: 1000 }),
    ]);
    // Pending counts against the capture: 2,500 more would exceed it.
    expect((await refund(orderId, { amount: 2500 })).status).toBe(409);

    expect((await refund(orderId, { amount: 500 })).status).toBe(201);

    const rows = await database.db.refund.findMany({ where: { orderId }, orderBy: { createdAt: "asc" } });
    expect(rows.map((r) => [r.amount, r.status])).toEqual([
      [1000, "succeeded"],
      [500, "succeeded"],
    ]);
    expect(await database.db.payment.findUniqueOrThrow({ where: { orderId } })).toMatchObject({
      amountRefunded: 1500,
    });
  });

  it("a refund landing beyond the capture (Stripe refunded more meanwhile) is recorded, capped on the payment, and ops are told once", async () => {
    const orderId = await capturedOrder(5500);
    const order = await database.db.order.findUniqueOrThrow({ where: { id: orderId } });
    // Our record knows of 3000 captured; Stripe refunded 1000 at the Dashboard, its webhook lost.
    await database.db.payment.update({ where: { orderId }, data: { amountCaptured: 3000 } });
    await sandbox.refund(
      { paymentIntent: order.paymentIntentId as string, amount: 1000 },
      { deliver: false },
    );
    const alerts: { key?: string; title: string }[] = [];
    const refunds = createRefunds({
      db: database.db,
      stripe,
      sender,
      logger,
      alerts: { notify: async (alert) => void alerts.push(alert) },
    });

    const outcome = await refunds.refund({ orderId, amount: 3000, by: "admin-api" });

    expect(outcome).toMatchObject({ amount: 3000, captured: 3000, refunded: 3000, refundable: 0 });
    const after = await database.db.order.findUniqueOrThrow({
      where: { id: orderId },
      include: { payment: true, refunds: true, timeline: true },
    });
    expect(after.payment).toMatchObject({ status: "refunded", amountRefunded: 3000 });
    expect(after.refunds).toEqual([expect.objectContaining({ amount: 3000, status: "succeeded" })]);
    const over = after.timeline.filter((t) => t.kind === "refund-over-captured");
    expect(over).toHaveLength(1);
    expect(over[0]?.detail).toMatchObject({ amount: 3000, captured: 3000, over: 1000 });
    expect(alerts).toEqual([
      expect.objectContaining({
        key: `refund-over-captured-${orderId}`,
        title: "Refunded more than was captured",
      }),
    ]);
  });

  it("Stripe's refund webhook landing before Stripe's answer: the request and its outcome are still on the timeline, once, and the customer is told once", async () => {
    const orderId = await capturedOrder(4000);
    const order = await database.db.order.findUniqueOrThrow({ where: { id: orderId } });
    const webhook = refundWebhook(order.paymentIntentId);
    // Real Stripe sends charge.refunded as soon as the refund exists: the webhook's intake may
    // record it before the API call that made it has returned here.
    const racing = refundsCreateThen(async () => {
      await webhook();
    });
    const refunds = createRefunds({ db: database.db, stripe: racing, sender, logger });

    const outcome = await refunds.refund({ orderId, amount: 1500, reason: "lid cracked", by: "admin-api" });
    await webhook();

    expect(outcome).toMatchObject({ amount: 1500, captured: 4000, refunded: 1500, refundable: 2500 });
    const after = await database.db.order.findUniqueOrThrow({
      where: { id: orderId },
      include: { payment: true, refunds: true, timeline: true },
    });
    expect(after.payment).toMatchObject({ amountRefunded: 1500 });
    expect(after.refunds).toEqual([expect.objectContaining({ amount: 1500, status: "succeeded" })]);
    const kinds = after.timeline.map((t) => t.kind).filter((k) => k.startsWith("refund-"));
    expect(kinds.sort()).toEqual(["refund-issued", "refund-requested"]);
    expect(after.timeline.find((t) => t.kind === "refund-issued")?.detail).toMatchObject({
      refundId: outcome.refundId,
      amount: 1500,
      refunded: 1500,
    });
    expect(
      sent.filter((m) => m.to === "refund@example.com" && /refund of \$15\.00/.test(m.subject)),
    ).toHaveLength(1);
  });

  it("a request that died after Stripe made its refund: the webhook records the request and its outcome, once, and the customer is told once", async () => {
    const orderId = await capturedOrder(4000);
    const order = await database.db.order.findUniqueOrThrow({ where: { id: orderId } });
    const refunds = createRefunds({ db: database.db, stripe, sender, logger });
    const webhook = refundWebhook(order.paymentIntentId, refunds);
    // The process dies once Stripe has made the refund, before its answer is recorded: the
    // request's row stays pending and nobody asks again.
    const dying = refundsCreateThen(async () => {
      throw new Error("the process died here");
    });
    const crashed = createRefunds({ db: database.db, stripe: dying, sender, logger });
    const mailsBefore = sent.length;
    await expect(
      crashed.refund({ orderId, amount: 1500, reason: "lid cracked", by: "admin-api" }),
    ).rejects.toMatchObject({ code: "upstream_unavailable" });

    // Stripe's webhook, twice (charge.refunded and refund.updated come for one refund).
    await webhook();
    await webhook();

    const after = await database.db.order.findUniqueOrThrow({
      where: { id: orderId },
      include: { payment: true, refunds: true, timeline: true },
    });
    expect(after.payment).toMatchObject({ amountRefunded: 1500 });
    expect(after.refunds).toEqual([
      expect.objectContaining({
        amount: 1500,
        status: "succeeded",
        providerId: expect.stringMatching(/^re_/),
      }),
    ]);
    const kinds = after.timeline.map((t) => t.kind).filter((k) => k.startsWith("refund-"));
    expect(kinds.sort()).toEqual(["refund-issued", "refund-requested"]);
    expect(after.timeline.find((t) => t.kind === "refund-requested")?.detail).toMatchObject({
      amount: 1500,
      reason: "lid cracked",
      by: "admin-api",
    });
    expect(after.timeline.find((t) => t.kind === "refund-issued")?.detail).toMatchObject({
      refundId: after.refunds[0]?.id,
      amount: 1500,
      refunded: 1500,
    });
    expect(sent.slice(mailsBefore).map((m) => m.subject)).toEqual([
      expect.stringMatching(/refund of \$15\.00/),
    ]);
  });

  it("refuses bad input, unknown orders, orders without a capture and a missing token", async () => {
    const orderId = await capturedOrder(1000);
    expect((await refund(orderId, { amount: 0 })).status).toBe(400);
    expect((await refund(orderId, { amount: 1.5 })).status).toBe(400);
    expect((await refund(orderId, { amount: 10, extra: true })).status).toBe(400);
    expect((await refund("00000000-0000-4000-8000-000000000000", {})).status).toBe(404);
    expect((await refund(orderId, {}, "wrong-token-0123456789")).status).toBe(401);
    const unpaid = await database.db.order.create({
      data: { customerId: "c", email: "u@example.com", currency: "usd", total: 100, paymentIntentId: "pi_x" },
    });
    const res = await refund(unpaid.id, {});
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("order_not_refundable");
  });
});
