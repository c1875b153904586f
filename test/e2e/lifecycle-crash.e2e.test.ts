import { Webhook } from "standardwebhooks";
import { lifecycleEvents } from "../../src/events/lifecycle";
import { startShopLifecycleApp } from "../support/shop-lifecycle-app";
import { startWebhookReceiver } from "../support/webhook-receiver";
import { adminToken, E2eHarness } from "./e2e-harness";

jest.setTimeout(240_000);

/**
 * Issue 40's must-show, the crash part: the app process (src/server.ts, production's entry point)
 * SIGKILLed twice in the middle of one order, just after its payment and just after its shipment
 * became lifecycle facts (whether or not its outbox sender had published them yet), and restarted.
 * A shop's own Inngest function, registered on the engine beside ours, still receives each of the
 * order's lifecycle events once; and (the second test) so does every subscribed webhook endpoint,
 * as Standard Webhooks deliveries the `standardwebhooks` package verifies.
 */
describe("end to end: lifecycle events across SIGKILLs of the app", () => {
  let h: E2eHarness;
  let shop: Awaited<ReturnType<typeof startShopLifecycleApp>>;

  beforeAll(async () => {
    h = await E2eHarness.start({
      env: {
        RETURN_RESTOCKING_FEE: "0",
        RETURN_WINDOW: "30d",
        // Seconds, not Standard Webhooks' minutes: a delivery refused while the receivers are held
        // around a kill is retried within the test (the schedule is configuration, not a timer).
        WEBHOOK_RETRY_SCHEDULE: "1s,2s,2s,2s,2s,2s,2s,2s",
      },
    });
    await h.addProduct("E2E-LIFE", 10, 2000);
    shop = await startShopLifecycleApp({
      engineUrl: h.engineUrl,
      sync: (url) => h.engine.sync(url),
    });
  });
  afterAll(async () => {
    await h.close();
    await shop.close();
  });

  /** Kills the app the moment the order's `name` event is in the outbox (a state, not a timer). */
  const killOnceWritten = async (orderId: string, name: string) => {
    await h.eventually(async () =>
      expect(await h.db.lifecycleOutboxEntry.count({ where: { orderId, name } })).toBe(1),
    );
    await h.app.stop("SIGKILL");
    await h.startApp();
  };

  it("payment, shipping and delivery: each event once, the app killed after the payment and the shipment", async () => {
    const { orderId, checkoutSessionId } = await h.checkout("cus_e2e_life", [
      { sku: "E2E-LIFE", quantity: 1 },
    ]);
    const completion = h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
    await killOnceWritten(orderId, "shop/order.paid.v1");
    await completion;
    await killOnceWritten(orderId, "shop/order.shipped.v1");

    const shipped = await h.eventually(async () => {
      const order = await h.order(orderId);
      expect(order.status).toBe("shipped");
      return order;
    }, 90_000);
    await h.engine.drain(); // the run waits for the delivery event before the carrier reports it
    const { delivery } = await h.easyPost.advanceTracker(shipped.shipment?.trackingNumber ?? "", "delivered");
    expect(delivery?.responseStatus).toBe(200);
    await h.eventually(async () => expect((await h.order(orderId)).status).toBe("delivered"), 60_000);

    const expected = { "shop/order.paid.v1": 1, "shop/order.shipped.v1": 1, "shop/order.delivered.v1": 1 };
    // Every row of the order published, and every run that started finished: then the counts are final.
    await h.eventually(async () => {
      const rows = await h.db.lifecycleOutboxEntry.findMany({ where: { orderId } });
      expect(rows.map((row) => row.name).sort()).toEqual(Object.keys(expected).sort());
      expect(rows.filter((row) => row.sentAt === null)).toEqual([]);
    }, 60_000);
    await h.eventually(async () => expect(shop.countsOf(orderId)).toEqual(expected), 60_000);
    await h.engine.drain();
    expect(shop.countsOf(orderId)).toEqual(expected);
    expect(
      shop.received
        .filter((e) => e.orderId === orderId)
        .map((e) => e.id)
        .sort(),
    ).toEqual([
      `lifecycle-order-delivered-${orderId}`,
      `lifecycle-order-paid-${orderId}`,
      expect.stringMatching(/^lifecycle-order-shipped-/),
    ]);
  });

  /**
   * Issue 40's must-show, the webhooks part: one order through payment (Stripe's webhooks delivered
   * three times), a run that fails for good after the capture and is re-driven, the app SIGKILLed
   * after the payment and after the shipment, a partial refund at Stripe's Dashboard (its webhooks
   * three times too), delivery and a return. Two endpoints on 127.0.0.1 (the test's NODE_ENV=test
   * keeps the SSRF guard off, as documented; production's defaults are untouched): one subscribed to
   * every event, one to payments and refunds. Each receives each of its events once, every request
   * verified with the standardwebhooks package, nothing deduplicated on the receiving side.
   *
   * Around each kill the receivers answer 500 (held): a delivery answered 200 and not yet recorded
   * when the process dies is sent again with the same webhook-id (at least once, decision 0198),
   * so the kill is taken when every accepted request is recorded; what it refuses meanwhile is
   * retried on the schedule and accepted once.
   */
  it("payment (webhook x3), a failed run re-driven, SIGKILLs, a partial refund, shipping, delivery, a return: once per subscribed endpoint, verified", async () => {
    const all = await startWebhookReceiver();
    const some = await startWebhookReceiver();
    try {
      const register = async (url: string, eventTypes: string[]) => {
        const res = await fetch(`${h.app.url}/api/admin/webhook-endpoints`, {
          method: "POST",
          headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
          body: JSON.stringify({ url, eventTypes }),
        });
        expect(res.status).toBe(201);
        return (await res.json()) as { id: string; secret: string };
      };
      const everything = await register(all.url, Object.keys(lifecycleEvents));
      const money = await register(some.url, ["shop/order.paid.v1", "shop/order.refunded.v1"]);
      const endpoints = [
        { receiver: all, endpoint: everything },
        { receiver: some, endpoint: money },
      ];
      const api = (path: string, body: unknown = {}) =>
        fetch(`${h.app.url}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });

      /** Holds the receivers, waits until every request they accepted is recorded, kills, restarts. */
      const killQuietly = async (orderId: string, name: string) => {
        await h.eventually(async () =>
          expect(await h.db.lifecycleOutboxEntry.count({ where: { orderId, name } })).toBe(1),
        );
        for (const { receiver } of endpoints) receiver.hold();
        await h.eventually(async () => {
          for (const { receiver, endpoint } of endpoints)
            expect(
              await h.db.webhookAttempt.count({ where: { ok: true, delivery: { endpointId: endpoint.id } } }),
            ).toBe(receiver.receipts.filter((r) => r.answered === 200).length);
        });
        await h.app.stop("SIGKILL");
        await h.startApp();
        for (const { receiver } of endpoints) receiver.release();
      };

      const { orderId, checkoutSessionId } = await h.checkout("cus_e2e_hooks", [
        { sku: "E2E-LIFE", quantity: 2 },
      ]);
      // The first run fails for good after the capture (the parcel cannot be recorded).
      await h.db.$executeRawUnsafe(
        `CREATE FUNCTION e2e_refuse_shipment() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'database unavailable'; END $$`,
      );
      await h.db.$executeRawUnsafe(
        `CREATE TRIGGER e2e_refuse_shipment BEFORE INSERT ON shipments FOR EACH ROW EXECUTE FUNCTION e2e_refuse_shipment()`,
      );
      try {
        const completion = h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
        await killQuietly(orderId, "shop/order.paid.v1");
        const completed = await completion;
        // Stripe delivers the checkout's webhooks three times in all.
        for (const event of completed.events)
          for (let i = 0; i < 2; i++) expect((await h.sandbox.redeliver(event.id)).status).toBe(200);
        await h.eventually(
          async () =>
            expect(
              await h.db.lifecycleOutboxEntry.count({ where: { orderId, name: "shop/order.failed.v1" } }),
            ).toBe(1),
          90_000,
        );
      } finally {
        await h.db.$executeRawUnsafe(`DROP TRIGGER e2e_refuse_shipment ON shipments`);
        await h.db.$executeRawUnsafe(`DROP FUNCTION e2e_refuse_shipment()`);
      }
      expect((await h.order(orderId)).payment?.status).toBe("captured");

      expect((await api(`/api/orders/${orderId}/redrive`)).status).toBe(202);
      await killQuietly(orderId, "shop/order.shipped.v1");
      const shipped = await h.eventually(async () => {
        const order = await h.order(orderId);
        expect(order.status).toBe("shipped");
        return order;
      }, 90_000);

      // A partial refund at Stripe's Dashboard, its webhooks delivered three times in all.
      const { events: refundEvents } = await h.sandbox.refund({
        paymentIntent: shipped.paymentIntentId as string,
        amount: 400,
      });
      for (const event of refundEvents)
        for (let i = 0; i < 2; i++) expect((await h.sandbox.redeliver(event.id)).status).toBe(200);
      await h.eventually(async () =>
        expect(
          await h.db.lifecycleOutboxEntry.count({ where: { orderId, name: "shop/order.refunded.v1" } }),
        ).toBe(1),
      );

      await h.engine.drain(); // the run waits for the delivery event before the carrier reports it
      const tracking = shipped.shipment?.trackingNumber ?? "";
      expect((await h.easyPost.advanceTracker(tracking, "delivered")).delivery?.responseStatus).toBe(200);
      await h.eventually(async () => expect((await h.order(orderId)).status).toBe("delivered"), 60_000);

      const returned = await api(`/api/orders/${orderId}/returns`, {
        lines: [{ sku: "E2E-LIFE", quantity: 1 }],
        reason: "damaged",
      });
      expect(returned.status).toBe(201);
      const label = await h.eventually(async () => {
        const row = await h.db.return.findFirstOrThrow({ where: { orderId } });
        expect(row.labelTrackingNumber).toBeTruthy();
        return row.labelTrackingNumber ?? "";
      }, 60_000);
      await h.easyPost.advanceTracker(label, "in_transit");
      await h.easyPost.advanceTracker(label, "delivered");
      await h.eventually(
        async () =>
          expect((await h.db.return.findFirstOrThrow({ where: { orderId } })).status).toBe("closed"),
        90_000,
      );

      const expected = {
        "shop/order.paid.v1": 1,
        "shop/order.failed.v1": 1,
        "shop/order.shipped.v1": 1,
        "shop/order.refunded.v1": 2,
        "shop/order.delivered.v1": 1,
        "shop/return.requested.v1": 1,
        "shop/return.received.v1": 1,
        "shop/return.refunded.v1": 1,
      };
      const expectedOf = {
        [everything.id]: expected,
        [money.id]: { "shop/order.paid.v1": 1, "shop/order.refunded.v1": 2 },
      };
      /**
       * What a receiver accepted (answered 200) for this order, by event type, each request verified
       * with the standardwebhooks package: every request counted, none merged.
       */
      const acceptedCounts = (receiver: typeof all, secret: string) => {
        const verifier = new Webhook(secret);
        const counts: Record<string, number> = {};
        for (const receipt of receiver.receipts.filter((r) => r.answered === 200)) {
          const message = verifier.verify(receipt.body, {
            "webhook-id": receipt.webhookId,
            "webhook-timestamp": receipt.timestamp,
            "webhook-signature": receipt.signature,
          }) as { type: string; data: { orderId?: string } };
          if (message.data.orderId === orderId) counts[message.type] = (counts[message.type] ?? 0) + 1;
        }
        return counts;
      };
      // Every fact published, and every delivery of the order settled: then the counts are final.
      await h.eventually(async () => {
        const rows = await h.db.lifecycleOutboxEntry.findMany({ where: { orderId } });
        expect(rows.filter((row) => row.sentAt === null || row.lastError !== null)).toEqual([]);
        const deliveries = await h.db.webhookDelivery.findMany({ where: { orderId } });
        expect(deliveries.map((d) => d.status).filter((status) => status !== "delivered")).toEqual([]);
        expect(deliveries).toHaveLength(
          Object.values(expectedOf).reduce(
            (sum, counts) => sum + Object.values(counts).reduce((a, b) => a + b, 0),
            0,
          ),
        );
      }, 90_000);
      await h.eventually(async () => expect(shop.countsOf(orderId)).toEqual(expected), 60_000);
      await h.engine.drain();

      // Everything again: Stripe's events of the order redelivered. Nothing new anywhere.
      for (const event of await h.db.stripeEvent.findMany({ where: { orderId } }))
        expect((await h.sandbox.redeliver(event.id)).status).toBe(200);
      await h.engine.drain();

      expect(shop.countsOf(orderId)).toEqual(expected);
      for (const { receiver, endpoint } of endpoints) {
        // Every request that reached the receiver verifies with its endpoint's secret...
        expect(receiver.verified(endpoint.secret)).toHaveLength(receiver.receipts.length);
        // ...and each event of the order was accepted once: one request answered 200 per webhook-id.
        expect(acceptedCounts(receiver, endpoint.secret)).toEqual(expectedOf[endpoint.id]);
        const acceptedIds = receiver.receipts.filter((r) => r.answered === 200).map((r) => r.webhookId);
        expect(new Set(acceptedIds).size).toBe(acceptedIds.length);
      }
      // The refunds: one from the Dashboard, one from the return, each its own event.
      const refunds = [
        ...new Map(
          all
            .verified(everything.secret)
            .filter((m) => m.payload.type === "shop/order.refunded.v1" && m.payload.data.orderId === orderId)
            .map((m) => [m.webhookId, m.payload.data.source]),
        ).values(),
      ].sort();
      expect(refunds).toEqual(["return", "stripe-dashboard"]);
    } finally {
      await all.close();
      await some.close();
    }
  });
});
