import { createResponseChecker } from "../support/openapi";
import { startWebhookReceiver } from "../support/webhook-receiver";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(300_000);

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

interface Delivery {
  id: string;
  webhookId: string;
  eventName: string;
  orderId: string | null;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  attemptLog: { ok: boolean | null; statusCode: number | null; error: string | null; kind: string }[];
}

/**
 * Issue 40's must-show for signed outbound webhooks: one order's lifecycle delivered once per
 * subscribed endpoint as Standard Webhooks messages the standardwebhooks package verifies; a
 * failing endpoint retried on its backoff and delivered once; "send again" with the same
 * webhook-id; a rotated secret during its overlap; an endpoint that keeps failing disabled with
 * ops told once; the SSRF guard; bad input refused without a change.
 */
describe("signed outbound webhooks", () => {
  let h: WorkflowHarness;
  let receiver: Receiver;
  let only: Receiver;
  let failingReceiver: Receiver;
  let orderId = "";
  const contract = createResponseChecker();

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { RETURN_RESTOCKING_FEE: "0", RETURN_WINDOW: "30d" } });
    h.sandbox.setWebhookUrl(`${h.appUrl}/api/stripe/webhook`);
    await h.addProduct("WH-1", 10, 2500);
    receiver = await startWebhookReceiver();
    only = await startWebhookReceiver();
    failingReceiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await h.close();
    await receiver.close();
    await only.close();
    await failingReceiver.close();
  });

  const api = async (method: string, path: string, body?: unknown, token = adminToken) => {
    const res = await fetch(`${h.appUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    // Every answer of the webhook admin API is held to GET /openapi.json's contract.
    if (path.startsWith("/api/admin/") && text) contract.check(method, path, res.status, JSON.parse(text));
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
  };
  const createEndpoint = async (url: string, eventTypes: string[]) => {
    const res = await api("POST", "/api/admin/webhook-endpoints", { url, eventTypes });
    expect(res.status).toBe(201);
    return res.body as { id: string; secret: string };
  };
  const deliveriesOf = async (endpointId: string) =>
    (await api("GET", `/api/admin/webhook-endpoints/${endpointId}/deliveries`)).body.deliveries as Delivery[];
  /** Sends what the outbox holds and runs what that started. */
  const publishAndRun = async (rounds = 2) => {
    await h.services.lifecycleEvents.drain();
    await h.settle(rounds);
    await h.services.lifecycleEvents.drain();
    await h.settle(1);
  };
  /** Sends what the outbox holds and runs it without moving the engine's clock: no backoff passes. */
  const publishNow = async () => {
    await h.services.lifecycleEvents.drain();
    await h.engine.drain();
  };
  const runUntil = async (what: string, check: () => Promise<boolean>) => {
    for (let round = 0; round < 40; round++) {
      if (await check()) return;
      await publishAndRun(1);
    }
    throw new Error(`never became true: ${what}`);
  };

  it("refuses bad input with a clear 4xx and changes nothing", async () => {
    const count = () => h.db.webhookEndpoint.count();
    const before = await count();
    const cases: [unknown, number, RegExp][] = [
      [{ url: "not a url", eventTypes: ["shop/order.paid.v1"] }, 400, /not a URL/],
      [{ url: "ftp://example.com/x", eventTypes: ["shop/order.paid.v1"] }, 400, /https/],
      [
        { url: "https://example.com/x", eventTypes: ["shop/order.paid"] },
        400,
        /unknown event type "shop\/order.paid"/,
      ],
      [{ url: "https://example.com/x", eventTypes: [] }, 400, /at least one/],
      [{ url: "https://user:pw@example.com/x", eventTypes: ["shop/order.paid.v1"] }, 400, /credentials/],
      [{ url: "https://example.com/x", eventTypes: ["shop/order.paid.v1"], extra: 1 }, 400, /extra/],
    ];
    for (const [body, status, message] of cases) {
      const res = await api("POST", "/api/admin/webhook-endpoints", body);
      expect({ status: res.status, code: (res.body.error as { code: string }).code }).toEqual({
        status,
        code: "validation_failed",
      });
      expect((res.body.error as { message: string }).message).toMatch(message);
    }
    const huge = JSON.stringify({
      url: "https://example.com/x",
      eventTypes: ["shop/order.paid.v1"],
      description: "x".repeat(200_000),
    });
    const tooLarge = await api("POST", "/api/admin/webhook-endpoints", huge);
    expect(tooLarge.status).toBe(413);
    expect((tooLarge.body.error as { code: string }).code).toBe("payload_too_large");
    expect(
      (await api("GET", "/api/admin/webhook-endpoints", undefined, "wrong-token-0123456789")).status,
    ).toBe(401);
    expect((await api("GET", "/api/admin/webhook-endpoints/nope")).status).toBe(404);
    expect((await api("POST", "/api/admin/webhook-deliveries/nope/send-again")).status).toBe(404);

    const created = await createEndpoint("https://example.com/hooks", ["shop/order.paid.v1"]);
    const stored = await h.db.webhookEndpoint.findUniqueOrThrow({ where: { id: created.id } });
    const patch = await api("PATCH", `/api/admin/webhook-endpoints/${created.id}`, { eventTypes: ["nope"] });
    expect(patch.status).toBe(400);
    expect((await api("PATCH", `/api/admin/webhook-endpoints/${created.id}`, {})).status).toBe(400);
    const rotate = await api("POST", `/api/admin/webhook-endpoints/${created.id}/rotate-secret`, {
      overlap: "forever",
    });
    expect(rotate.status).toBe(400);
    const unchanged = await h.db.webhookEndpoint.findUniqueOrThrow({ where: { id: created.id } });
    expect(unchanged.eventTypes).toEqual(["shop/order.paid.v1"]);
    expect(unchanged.secret).toBe(stored.secret);
    // The secret is shown once: never in a read.
    const read = await api("GET", `/api/admin/webhook-endpoints/${created.id}`);
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body)).not.toContain(created.secret);
    expect((await api("DELETE", `/api/admin/webhook-endpoints/${created.id}`)).status).toBe(204);
    expect(await count()).toBe(before);
  });

  const orderEvents = [
    "shop/order.paid.v1",
    "shop/order.shipped.v1",
    "shop/order.delivered.v1",
    "shop/order.refunded.v1",
    "shop/order.cancelled.v1",
    "shop/order.failed.v1",
    "shop/return.requested.v1",
    "shop/return.received.v1",
    "shop/return.refunded.v1",
  ];
  let all: { id: string; secret: string };
  let shippedOnly: { id: string; secret: string };

  it("delivers one order's lifecycle once per subscribed endpoint, verified by standardwebhooks", async () => {
    all = await createEndpoint(receiver.url, orderEvents);
    shippedOnly = await createEndpoint(only.url, ["shop/order.shipped.v1"]);

    const checkout = await fetch(`${h.appUrl}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        customerId: "cus_hooks",
        email: "hooks@example.com",
        items: [{ sku: "WH-1", quantity: 2 }],
      }),
    });
    expect(checkout.status).toBe(201);
    const placed = (await checkout.json()) as { orderId: string; checkoutSessionId: string };
    orderId = placed.orderId;
    // The first run fails for good after the capture (the parcel cannot be recorded); re-driven below.
    await h.db.$executeRawUnsafe(
      `CREATE FUNCTION wh_refuse_shipment() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'database unavailable'; END $$`,
    );
    await h.db.$executeRawUnsafe(
      `CREATE TRIGGER wh_refuse_shipment BEFORE INSERT ON shipments FOR EACH ROW EXECUTE FUNCTION wh_refuse_shipment()`,
    );
    try {
      const completed = await h.sandbox.completeCheckoutSession(placed.checkoutSessionId, "authorized");
      // Stripe delivers the checkout's webhooks three times in all.
      for (const event of completed.events)
        for (let i = 0; i < 2; i++) expect((await h.sandbox.redeliver(event.id)).status).toBe(200);
      await h.settle(20);
    } finally {
      await h.db.$executeRawUnsafe(`DROP TRIGGER wh_refuse_shipment ON shipments`);
      await h.db.$executeRawUnsafe(`DROP FUNCTION wh_refuse_shipment()`);
    }
    expect((await h.order(orderId)).payment?.status).toBe("captured");
    await publishAndRun();
    expect((await api("POST", `/api/orders/${orderId}/redrive`)).status).toBe(202);
    await runUntil("the order shipped", async () => (await h.order(orderId)).status === "shipped");

    const refund = await api("POST", `/api/orders/${orderId}/refund`, { amount: 700 });
    expect(refund.status).toBe(201);
    await h.sandbox.deliveriesSettled();
    await publishAndRun();

    await h.easyPost.advanceTracker(`order-${orderId}`, "in_transit");
    await h.easyPost.advanceTracker(`order-${orderId}`, "delivered");
    await publishAndRun();
    expect((await h.order(orderId)).status).toBe("delivered");

    const created = await api("POST", `/api/orders/${orderId}/returns`, {
      lines: [{ sku: "WH-1", quantity: 1 }],
      reason: "damaged",
    });
    expect(created.status).toBe(201);
    const labelled = async () =>
      (await h.db.return.findFirst({ where: { orderId } }))?.labelTrackingNumber ?? "";
    await runUntil("the return's label bought", async () => (await labelled()) !== "");
    const trackingNumber = await labelled();
    await h.easyPost.advanceTracker(trackingNumber, "in_transit");
    await h.easyPost.advanceTracker(trackingNumber, "delivered");
    await runUntil(
      "the return closed",
      async () => (await h.db.return.findFirstOrThrow({ where: { orderId } })).status === "closed",
    );
    await publishAndRun();
    // Everything again: Stripe's events redelivered, the outbox drained, the engine run.
    for (const event of await h.db.stripeEvent.findMany({ where: { orderId } }))
      expect((await h.sandbox.redeliver(event.id)).status).toBe(200);
    await publishAndRun();

    const counts = (messages: { payload: { type: string; data: Record<string, unknown> } }[]) => {
      const byType: Record<string, number> = {};
      for (const { payload } of messages.filter((m) => m.payload.data.orderId === orderId))
        byType[payload.type] = (byType[payload.type] ?? 0) + 1;
      return byType;
    };
    const verified = receiver.verified(all.secret);
    // Every request verified: none unsigned, none signed otherwise.
    expect(verified).toHaveLength(receiver.receipts.length);
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
    expect(counts(verified)).toEqual(expected);
    expect(new Set(verified.map((m) => m.webhookId)).size).toBe(verified.length);
    expect(counts(only.verified(shippedOnly.secret))).toEqual({ "shop/order.shipped.v1": 1 });
    expect(only.receipts).toHaveLength(1);
    // The log says the same: each delivered at the first attempt.
    const log = await deliveriesOf(all.id);
    expect(log.every((d) => d.status === "delivered" && d.attempts === 1)).toBe(true);
    expect(log.map((d) => d.webhookId).sort()).toEqual(verified.map((m) => m.webhookId).sort());

    // A crash after Inngest took a batch and before the outbox marked it sent: the batch goes again,
    // with the same event ids; no delivery is doubled.
    await h.db.lifecycleOutboxEntry.updateMany({ where: { orderId }, data: { sentAt: null } });
    await publishAndRun();
    expect(await h.db.lifecycleOutboxEntry.count({ where: { orderId, sentAt: null } })).toBe(0);
    expect(counts(receiver.verified(all.secret))).toEqual(expected);
    expect(receiver.receipts).toHaveLength(verified.length);
  });

  let failing: { id: string; secret: string };

  it("retries an endpoint answering 500 on its backoff and delivers once when it recovers", async () => {
    failing = await createEndpoint(failingReceiver.url, ["shop/order.fulfilment-held.v1"]);
    failingReceiver.hold();
    await h.services.workflow.timeline.record(orderId, "hold-placed", { reason: "ops" });
    await publishNow();
    expect(failingReceiver.receipts.map((r) => r.answered)).toEqual([500]);
    let [delivery] = await deliveriesOf(failing.id);
    expect(delivery).toMatchObject({ status: "pending", attempts: 1 });
    expect(delivery?.nextAttemptAt).not.toBeNull();

    // The first retry comes 5 s later (WEBHOOK_RETRY_SCHEDULE's default), on the engine's clock.
    await h.engine.clock.advance(5_000);
    expect(failingReceiver.receipts.map((r) => r.answered)).toEqual([500, 500]);
    failingReceiver.release();
    await h.engine.clock.advance(5 * 60_000);
    expect(failingReceiver.receipts.map((r) => r.answered)).toEqual([500, 500, 200]);
    // Nothing more, however long the clock runs.
    await h.settle(3);
    await h.engine.clock.advance(2 * 86_400_000);
    expect(failingReceiver.receipts).toHaveLength(3);

    [delivery] = await deliveriesOf(failing.id);
    expect(delivery).toMatchObject({ status: "delivered", attempts: 3 });
    expect(delivery?.attemptLog.map((a) => [a.ok, a.statusCode])).toEqual([
      [false, 500],
      [false, 500],
      [true, 200],
    ]);
    // One message: the same webhook-id on every attempt; each attempt signed and verifiable.
    expect(new Set(failingReceiver.receipts.map((r) => r.webhookId))).toEqual(new Set([delivery?.webhookId]));
    expect(failingReceiver.verified(failing.secret)).toHaveLength(3);
    // Its failing streak ended with the success.
    expect(
      (await h.db.webhookEndpoint.findUniqueOrThrow({ where: { id: failing.id } })).failingSince,
    ).toBeNull();
  });

  it("sends again with the same webhook-id", async () => {
    const [delivery] = await deliveriesOf(failing.id);
    const again = await api("POST", `/api/admin/webhook-deliveries/${delivery?.id ?? ""}/send-again`);
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ webhookId: delivery?.webhookId, resend: 1 });
    await h.engine.drain();
    expect(failingReceiver.receipts).toHaveLength(4);
    expect(failingReceiver.receipts[3]?.webhookId).toBe(delivery?.webhookId);
    expect(failingReceiver.verified(failing.secret)).toHaveLength(4);
    const [after] = await deliveriesOf(failing.id);
    expect(after).toMatchObject({ status: "delivered", attempts: 4 });
    expect(after?.attemptLog.map((a) => a.kind)).toEqual([
      "scheduled",
      "scheduled",
      "scheduled",
      "send-again",
    ]);
  });

  it("signs with the old and the new secret during a rotation's overlap, then the new one only", async () => {
    const patched = await api("PATCH", `/api/admin/webhook-endpoints/${failing.id}`, {
      eventTypes: ["shop/order.fulfilment-held.v1", "shop/order.fulfilment-released.v1"],
    });
    expect(patched.status).toBe(200);
    const rotated = await api("POST", `/api/admin/webhook-endpoints/${failing.id}/rotate-secret`, {});
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.secret as string;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(failing.secret);
    expect(rotated.body.previousSecretExpiresAt).not.toBeNull();

    await h.services.workflow.timeline.record(orderId, "hold-released", { reason: "ops" });
    await publishNow();
    const released = (secret: string) =>
      failingReceiver.verified(secret).filter((m) => m.payload.type === "shop/order.fulfilment-released.v1");
    expect(released(failing.secret)).toHaveLength(1);
    expect(released(newSecret)).toHaveLength(1);

    // Rotated again with no overlap: the previous secret no longer signs.
    const again = await api("POST", `/api/admin/webhook-endpoints/${failing.id}/rotate-secret`, {
      overlap: "0s",
    });
    const newest = again.body.secret as string;
    await h.services.workflow.timeline.record(orderId, "hold-placed", { reason: "ops", note: "second" });
    await publishNow();
    const held = (secret: string) =>
      failingReceiver.verified(secret).filter((m) => m.payload.data.note === "second");
    expect(held(newest)).toHaveLength(1);
    expect(held(newSecret)).toHaveLength(0);
  });

  it("disables an endpoint that kept failing for WEBHOOK_DISABLE_AFTER and tells ops once", async () => {
    const down = await startWebhookReceiver();
    try {
      down.hold();
      const endpoint = await createEndpoint(down.url, ["shop/order.fulfilment-held.v1"]);
      // Failing since four days (the default period is 3d).
      await h.db.webhookEndpoint.update({
        where: { id: endpoint.id },
        data: { failingSince: new Date(Date.now() - 4 * 86_400_000) },
      });
      const alertsBefore = h.slack.bodies.length;
      await h.services.workflow.timeline.record(orderId, "hold-placed", { reason: "ops", note: "third" });
      await h.services.workflow.timeline.record(orderId, "hold-placed", { reason: "ops", note: "fourth" });
      await publishNow();
      expect(down.receipts.length).toBeGreaterThanOrEqual(1);
      const row = await h.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
      expect(row.enabled).toBe(false);
      expect(row.disabledReason).toMatch(/every attempt failed since/);
      await h.settle(3);
      const alerts = h.slack.bodies
        .slice(alertsBefore)
        .filter((body) => JSON.stringify(body).includes("Webhook endpoint disabled"));
      expect(alerts).toHaveLength(1);
      expect(JSON.stringify(alerts[0])).toContain(endpoint.id);
      // Its deliveries stop: skipped, no more attempts.
      const received = down.receipts.length;
      await h.engine.clock.advance(86_400_000);
      expect(down.receipts).toHaveLength(received);
      const statuses = (await deliveriesOf(endpoint.id)).map((d) => d.status);
      expect(statuses.every((status) => status !== "pending")).toBe(true);
      expect(statuses).toContain("skipped");
      // Sending again to a disabled endpoint is refused.
      const [one] = await deliveriesOf(endpoint.id);
      expect((await api("POST", `/api/admin/webhook-deliveries/${one?.id ?? ""}/send-again`)).status).toBe(
        409,
      );
    } finally {
      await down.close();
    }
  });

  it("keeps signing secrets encrypted at rest; a row stored in clear before still signs and is sealed at the next start", async () => {
    const vault = await startWebhookReceiver();
    try {
      const endpoint = await createEndpoint(vault.url, ["shop/order.fulfilment-held.v1"]);
      const row = await h.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
      const key = endpoint.secret.slice("whsec_".length);
      expect(row.secret).toMatch(/^enc:v1:/);
      expect(row.secret).not.toContain(key);
      await h.services.workflow.timeline.record(orderId, "hold-placed", { reason: "ops", note: "sealed" });
      await publishNow();
      expect(vault.verified(endpoint.secret).map((m) => m.payload.data.note)).toContain("sealed");

      // A row as decision 0198 stored it, its secret in clear: it keeps working as it is...
      const legacy = "whsec_" + Buffer.alloc(32, 7).toString("base64");
      await h.db.webhookEndpoint.update({ where: { id: endpoint.id }, data: { secret: legacy } });
      await h.services.workflow.timeline.record(orderId, "hold-placed", { reason: "ops", note: "legacy" });
      await publishNow();
      expect(vault.verified(legacy).map((m) => m.payload.data.note)).toEqual(["legacy"]);

      // ...and the next start seals it; it still signs the same.
      await h.restartService({});
      const resealed = await h.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
      expect(resealed.secret).toMatch(/^enc:v1:/);
      expect(resealed.secret).not.toContain(legacy.slice("whsec_".length));
      await h.services.workflow.timeline.record(orderId, "hold-placed", { reason: "ops", note: "resealed" });
      await publishNow();
      expect(vault.verified(legacy).map((m) => m.payload.data.note)).toEqual(["legacy", "resealed"]);

      // A rotation from a sealed row: the previous secret moves sealed, and both sign in the overlap.
      const rotated = await api("POST", `/api/admin/webhook-endpoints/${endpoint.id}/rotate-secret`, {});
      expect(rotated.status).toBe(200);
      const after = await h.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
      expect(after.previousSecret).toBe(resealed.secret);
      await h.services.workflow.timeline.record(orderId, "hold-placed", { reason: "ops", note: "rotated" });
      await publishNow();
      const rotatedNotes = (secret: string) =>
        vault.verified(secret).filter((m) => m.payload.data.note === "rotated");
      expect(rotatedNotes(legacy)).toHaveLength(1);
      expect(rotatedNotes(rotated.body.secret as string)).toHaveLength(1);
      expect((await api("DELETE", `/api/admin/webhook-endpoints/${endpoint.id}`)).status).toBe(204);
    } finally {
      await vault.close();
    }
  });

  it("with the SSRF guard on: refuses private addresses at creation and at delivery", async () => {
    await h.restartService({ WEBHOOK_BLOCK_PRIVATE_ADDRESSES: "true" });
    const before = await h.db.webhookEndpoint.count();
    for (const url of [
      receiver.url,
      "http://localhost:9/x",
      "http://10.1.2.3/x",
      "http://169.254.169.254/latest/meta-data",
      "http://[::1]/x",
      "http://[fd00::1]/x",
      "http://0.0.0.0/x",
    ]) {
      const res = await api("POST", "/api/admin/webhook-endpoints", {
        url,
        eventTypes: ["shop/order.paid.v1"],
      });
      expect([url, res.status]).toEqual([url, 400]);
      expect((res.body.error as { message: string }).message).toMatch(/not allowed|cannot resolve/);
    }
    expect(await h.db.webhookEndpoint.count()).toBe(before);

    // An endpoint registered before the guard was on is refused at delivery: nothing reaches it.
    const received = failingReceiver.receipts.length;
    await h.services.workflow.timeline.record(orderId, "hold-placed", { reason: "ops", note: "guarded" });
    await publishNow();
    expect(failingReceiver.receipts).toHaveLength(received);
    const [latest] = await deliveriesOf(failing.id);
    expect(latest?.attemptLog[0]?.error).toMatch(/127\.0\.0\.1.*not allowed/);

    await h.restartService({ WEBHOOK_REQUIRE_HTTPS: "true" });
    const plain = await api("POST", "/api/admin/webhook-endpoints", {
      url: "http://example.com/x",
      eventTypes: ["shop/order.paid.v1"],
    });
    expect(plain.status).toBe(400);
    expect((plain.body.error as { message: string }).message).toMatch(/must be https/);
  });
});
