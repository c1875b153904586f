import type { Server } from "node:http";
import { parseConfig } from "../../src/config";
import { createDatabase, defaultPoolSize } from "../../src/db/client";
import { createLogger } from "../../src/logger";
import { IntakeHarness, startInstance } from "./intake-harness";

/**
 * Under load, checkout answers 201, 409 or 503 (with Retry-After), never leaves an order without its session
 * nor a session without its order, accepts an Idempotency-Key, and sizes its pool from configuration.
 */
describe("checkout under load leaves no half-made orders", () => {
  let h: IntakeHarness;
  beforeAll(async () => {
    h = await IntakeHarness.start();
  });
  afterAll(() => h.close());

  interface Answer {
    status: number;
    retryAfter: string | null;
    body: {
      orderId?: string;
      checkoutSessionId?: string;
      checkoutUrl?: string;
      error?: { code: string; message: string };
    };
  }

  const post = async (body: unknown, options: { key?: string; url?: string } = {}): Promise<Answer> => {
    const res = await fetch(`${options.url ?? h.url}/api/checkout`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(options.key !== undefined ? { "idempotency-key": options.key } : {}),
      },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      retryAfter: res.headers.get("retry-after"),
      body: (await res.json()) as Answer["body"],
    };
  };

  const cart = (customerId: string, sku: string, quantity = 1) => ({
    customerId,
    email: "ada@example.com",
    items: [{ sku, quantity }],
  });

  const addProduct = (sku: string, stockOnHand: number) =>
    h.db.product.create({ data: { sku, name: sku, unitPrice: 1000, currency: "usd", stockOnHand } });
  const stockOf = async (sku: string) =>
    (await h.db.product.findUniqueOrThrow({ where: { sku } })).stockOnHand;

  /** Sessions Stripe created for these orders (one per order: the key is derived from its id). */
  const sessionsCreatedFor = (orderIds: string[]) =>
    h.sandbox.requests.filter(
      (r) =>
        r.endpoint === "checkout.sessions.create" &&
        r.status === 200 &&
        orderIds.includes(String(r.params.client_reference_id)),
    );

  /** Sessions of this order that Stripe reports expired. */
  const expiredSessionsOf = (orderId: string) =>
    h.sandbox
      .events("checkout.session.expired")
      .filter((e) => (e.data.object as { client_reference_id?: string }).client_reference_id === orderId);

  /** Orders that can never be paid but were left pending (no session recorded). */
  const halfMadeOrders = (customerPrefix: string) =>
    h.db.order.count({
      where: { customerId: { startsWith: customerPrefix }, status: "pending", checkoutSessionId: null },
    });

  it("checkout under load: 60 concurrent checkouts for 5 in stock answer 201 five times and 409 or 503 otherwise, leaving nothing half-made", async () => {
    await addProduct("LOAD-1", 5);
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => post(cart(`cus-load-${i}`, "LOAD-1"), { key: `load-${i}` })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 201 || s === 409 || s === 503)).toBe(true);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    for (const answer of answers.filter((a) => a.status === 503)) expect(answer.retryAfter).not.toBeNull();
    for (const answer of answers.filter((a) => a.status === 409)) {
      expect(answer.body.error?.code).toBe("insufficient_stock");
    }

    // Every 201 is a payable order pointing at its session; nothing else exists.
    const orders = await h.db.order.findMany({ where: { customerId: { startsWith: "cus-load-" } } });
    expect(orders).toHaveLength(5);
    expect(orders.every((o) => o.status === "pending" && o.checkoutSessionId !== null)).toBe(true);
    expect(await halfMadeOrders("cus-load-")).toBe(0);
    expect(sessionsCreatedFor(orders.map((o) => o.id))).toHaveLength(5);
    expect(await stockOf("LOAD-1")).toBe(0);
  });

  it("Idempotency-Key: a client retry returns the same session, and another body with the same key is refused", async () => {
    await addProduct("IDEM-1", 10);
    const body = cart("cus-idem", "IDEM-1", 2);
    const first = await post(body, { key: "retry-me-1" });
    const retry = await post(body, { key: "retry-me-1" });
    const concurrent = await Promise.all([
      post(body, { key: "retry-me-1" }),
      post(body, { key: "retry-me-1" }),
    ]);
    expect(first.status).toBe(201);
    for (const answer of [retry, ...concurrent]) {
      expect(answer).toMatchObject({ status: 201, body: first.body });
    }
    expect(await h.db.order.count({ where: { customerId: "cus-idem" } })).toBe(1);
    expect(await stockOf("IDEM-1")).toBe(8); // held once

    const other = await post(cart("cus-idem", "IDEM-1", 3), { key: "retry-me-1" });
    expect(other).toMatchObject({ status: 422, body: { error: { code: "idempotency_key_reused" } } });
    // Keys belong to a customer: another customer's same key is another checkout.
    const someoneElse = await post(cart("cus-idem-2", "IDEM-1", 2), { key: "retry-me-1" });
    expect(someoneElse.status).toBe(201);
    expect(someoneElse.body.orderId).not.toBe(first.body.orderId);
    expect(await post(body, { key: "" })).toMatchObject({
      status: 400,
      body: { error: { code: "validation_failed" } },
    });
  });

  it("a session created at Stripe whose order write failed is expired, the stock released, and the answer is 503", async () => {
    await addProduct("ATTACH-1", 4);
    // A real PostgreSQL failure on exactly the write that records the session.
    await h.db.$executeRawUnsafe(`
      CREATE FUNCTION fail_attach() RETURNS trigger AS $$
      BEGIN
        IF NEW.customer_id = 'cus-attach-fails' AND NEW.checkout_session_id IS NOT NULL THEN
          RAISE EXCEPTION 'simulated outage while recording the session';
        END IF;
        RETURN NEW;
      END $$ LANGUAGE plpgsql`);
    await h.db.$executeRawUnsafe(
      `CREATE TRIGGER fail_attach BEFORE UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION fail_attach()`,
    );
    try {
      const res = await post(cart("cus-attach-fails", "ATTACH-1", 3), { key: "attach-1" });
      expect(res).toMatchObject({ status: 503, body: { error: { code: "service_unavailable" } } });
      expect(res.retryAfter).not.toBeNull();
    } finally {
      await h.db.$executeRawUnsafe(`DROP TRIGGER fail_attach ON orders`);
      await h.db.$executeRawUnsafe(`DROP FUNCTION fail_attach()`);
    }
    const order = await h.db.order.findFirstOrThrow({ where: { customerId: "cus-attach-fails" } });
    expect(order).toMatchObject({ status: "expired", checkoutSessionId: null });
    const [created] = sessionsCreatedFor([order.id]);
    expect(created).toBeDefined();
    expect(expiredSessionsOf(order.id)).toHaveLength(1);
    expect(await stockOf("ATTACH-1")).toBe(4);
    expect(await halfMadeOrders("cus-attach-fails")).toBe(0);
  });

  it("answers 503 with Retry-After while Stripe is down; the same key resumes the checkout once it is back", async () => {
    await addProduct("DOWN-1", 3);
    h.sandbox.injectFailure("checkout.sessions.create", { kind: "server_error" });
    const body = cart("cus-down", "DOWN-1");
    const down = await post(body, { key: "down-1" });
    expect(down).toMatchObject({ status: 503, body: { error: { code: "service_unavailable" } } });
    expect(down.retryAfter).toBe("2");

    const resumed = await post(body, { key: "down-1" });
    expect(resumed.status).toBe(201);
    const orders = await h.db.order.findMany({ where: { customerId: "cus-down" } });
    expect(orders).toHaveLength(1);
    expect(orders[0]?.checkoutSessionId).toBe(resumed.body.checkoutSessionId);
    expect(await stockOf("DOWN-1")).toBe(2);
  });

  it("the checkout sweep expires a half-made order whose client never came back, and releases its stock", async () => {
    await addProduct("DOWN-2", 3);
    // Stripe's 500 leaves it unknown whether a session was made: the order stays for the sweep.
    h.sandbox.injectFailure("checkout.sessions.create", { kind: "server_error" });
    const res = await post(cart("cus-gone", "DOWN-2", 2));
    expect(res.status).toBe(503);
    const order = await h.db.order.findFirstOrThrow({ where: { customerId: "cus-gone" } });
    expect(order).toMatchObject({ status: "pending", checkoutSessionId: null });
    expect(await stockOf("DOWN-2")).toBe(1);

    // Too young to touch: the request might still be running.
    expect((await h.checkoutSweep.expireHalfMadeOrders(new Date())).expired).toBe(0);
    const later = new Date(Date.now() + 3 * 60_000);
    expect(await h.checkoutSweep.expireHalfMadeOrders(later)).toMatchObject({ expired: 1, failed: 0 });
    expect(await h.db.order.findUniqueOrThrow({ where: { id: order.id } })).toMatchObject({
      status: "expired",
    });
    // Whatever session Stripe has under the order's key (here the sweep's own replay made it) is expired.
    const sessions = sessionsCreatedFor([order.id]);
    expect(sessions.length).toBeGreaterThan(0);
    expect(expiredSessionsOf(order.id)).toHaveLength(1);
    expect(await stockOf("DOWN-2")).toBe(3);
    expect(await halfMadeOrders("cus-gone")).toBe(0);
  });

  describe("pool size from configuration", () => {
    it("reads DATABASE_POOL_SIZE and DATABASE_POOL_TIMEOUT, with documented defaults, naming a bad value", () => {
      expect(parseConfig({})).toMatchObject({
        DATABASE_POOL_SIZE: defaultPoolSize,
        DATABASE_POOL_TIMEOUT: "5s",
      });
      expect(parseConfig({ DATABASE_POOL_SIZE: "40" }).DATABASE_POOL_SIZE).toBe(40);
      expect(() => parseConfig({ DATABASE_POOL_SIZE: "0" })).toThrow(/DATABASE_POOL_SIZE/);
      expect(() => parseConfig({ CHECKOUT_SESSION_TTL: "10m" })).toThrow(/CHECKOUT_SESSION_TTL/);
    });

    it("answers 503 with Retry-After, not 500, when no database connection comes free in time", async () => {
      await addProduct("BUSY-1", 5);
      const db = createDatabase(h.database.url, { maxConnections: 1, connectionTimeoutMs: 200 });
      let server: Server | undefined;
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      try {
        const instance = await startInstance({
          database: h.database,
          db,
          stripe: h.stripe,
          eventApi: h.eventApi,
          logger: createLogger({ level: "silent" }),
          alerts: [],
          captureMethod: "manual",
        });
        server = instance.server;
        // The pool's one connection is busy with someone else's transaction.
        let started: () => void = () => undefined;
        const busy = new Promise<void>((resolve) => (started = resolve));
        const holder = db.$transaction(
          async (tx) => {
            await tx.$queryRaw`SELECT 1`;
            started();
            await held;
          },
          { timeout: 60_000 },
        );
        await busy;
        const res = await post(cart("cus-busy", "BUSY-1"), { url: instance.url, key: "busy-1" });
        release();
        await holder;
        // No connection for us in time: the database is unavailable to this request.
        expect(res).toMatchObject({ status: 503, body: { error: { code: "database_unavailable" } } });
        expect(res.retryAfter).toBe("2");
        expect(await h.db.order.count({ where: { customerId: "cus-busy" } })).toBe(0);
        expect(await stockOf("BUSY-1")).toBe(5);
      } finally {
        release();
        server?.closeAllConnections();
        await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
        await db.$disconnect();
      }
    });
  });
});
