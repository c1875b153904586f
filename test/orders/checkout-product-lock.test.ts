import { Client } from "pg";
import {
  createCheckoutRepository,
  type PendingOrderInput,
} from "../../src/orders/checkout/checkout-repository";
import { createTestDatabase, type TestDatabase } from "../support/database";

/**
 * Which lock the checkout's statement takes on its product rows: one that serialises stock writes
 * (two checkouts take turns, the second reads the first's stock) and lets other transactions'
 * foreign-key checks on the product (FOR KEY SHARE: a fulfilment writing its reservation or its
 * ledger row) go by, both ways. Decided by states seen in pg_stat_activity, never by time.
 */
describe("the checkout's lock on its products", () => {
  let database: TestDatabase;
  let other: Client;
  let watcher: Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    other = new Client({ connectionString: database.url });
    watcher = new Client({ connectionString: database.url });
    await Promise.all([other.connect(), watcher.connect()]);
  });
  afterAll(async () => {
    await Promise.all([other.end(), watcher.end()]);
    await database.drop();
  });

  const input = (sku: string, key: string): PendingOrderInput => ({
    customerId: `cus_${key}`,
    email: "buyer@example.com",
    currency: "usd",
    lines: [{ sku, name: sku, unitPrice: 1000, quantity: 1 }],
    idempotencyKey: key,
    requestHash: `hash-${key}`,
    expiresAt: new Date(Date.now() + 3_600_000),
  });
  const stockOf = async (sku: string) =>
    (await database.db.product.findUniqueOrThrow({ where: { sku } })).stockOnHand;

  /** Backends of this database, other than the two test clients, waiting on a heavyweight lock. */
  const waitingOnALock = async (): Promise<number> => {
    const { rows } = await watcher.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'
         AND pid <> pg_backend_pid() AND pid <> $1`,
      [(other as unknown as { processID: number }).processID],
    );
    return rows[0]?.n ?? 0;
  };

  /** Polls until `work` has settled or a backend is seen waiting on a lock: which came first. */
  const settledOrWaiting = async (work: Promise<unknown>): Promise<"settled" | "waiting"> => {
    let settled = false;
    const done = work.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (;;) {
      if (settled) return "settled";
      if ((await waitingOnALock()) > 0) return settled ? "settled" : "waiting";
      await Promise.race([done, new Promise((resolve) => setImmediate(resolve))]);
    }
  };

  it("does not wait for another transaction's foreign-key check on the product (a fulfilment's row naming it)", async () => {
    await database.db.product.create({
      data: { sku: "LOCK-FK", name: "Lock", unitPrice: 1000, currency: "usd", stockOnHand: 5 },
    });
    const checkouts = createCheckoutRepository(database.db);
    // What PostgreSQL's foreign-key check runs for a row naming the product (stock_reservations,
    // stock_movements), held open as a fulfilment's statement holds it until its commit.
    await other.query("BEGIN");
    await other.query(`SELECT 1 FROM ONLY products x WHERE sku = 'LOCK-FK' FOR KEY SHARE OF x`);
    try {
      const checkout = checkouts.createPendingOrder(input("LOCK-FK", "fk-1"));
      expect(await settledOrWaiting(checkout)).toBe("settled");
      await expect(checkout).resolves.toMatchObject({ total: 1000 });
    } finally {
      await other.query("COMMIT");
    }
    expect(await stockOf("LOCK-FK")).toBe(4);
  });

  it("still makes a checkout wait for a stock write in progress, and read the stock it left", async () => {
    await database.db.product.create({
      data: { sku: "LOCK-TURN", name: "Lock", unitPrice: 1000, currency: "usd", stockOnHand: 1 },
    });
    const checkouts = createCheckoutRepository(database.db);
    // Another checkout's lock, then its write taking the last unit.
    await other.query("BEGIN");
    await other.query(`SELECT 1 FROM products WHERE sku = 'LOCK-TURN' FOR NO KEY UPDATE`);
    let checkout: Promise<unknown>;
    try {
      checkout = checkouts.createPendingOrder(input("LOCK-TURN", "turn-1"));
      expect(await settledOrWaiting(checkout)).toBe("waiting");
      await other.query(`UPDATE products SET stock_on_hand = 0 WHERE sku = 'LOCK-TURN'`);
    } finally {
      await other.query("COMMIT");
    }
    await expect(checkout).rejects.toMatchObject({ name: "HoldOutOfStock" });
    expect(await stockOf("LOCK-TURN")).toBe(0);
    expect(await database.db.order.count({ where: { customerId: "cus_turn-1" } })).toBe(0);
  });

  it("two checkouts queued behind a stock write both go through once it commits (no deadlock)", async () => {
    await database.db.product.create({
      data: { sku: "LOCK-QUEUE", name: "Lock", unitPrice: 1000, currency: "usd", stockOnHand: 10 },
    });
    const checkouts = createCheckoutRepository(database.db);
    // A fulfilment's reservation: its foreign-key check on the product, open until its commit.
    const keyShare = new Client({ connectionString: database.url });
    await keyShare.connect();
    await keyShare.query("BEGIN");
    await keyShare.query(`SELECT 1 FROM ONLY products x WHERE sku = 'LOCK-QUEUE' FOR KEY SHARE OF x`);
    await other.query("BEGIN");
    await other.query(`UPDATE products SET stock_on_hand = stock_on_hand - 1 WHERE sku = 'LOCK-QUEUE'`);
    let first: Promise<unknown>;
    let second: Promise<unknown>;
    try {
      first = checkouts.createPendingOrder(input("LOCK-QUEUE", "queue-1"));
      expect(await settledOrWaiting(first)).toBe("waiting");
      second = checkouts.createPendingOrder(input("LOCK-QUEUE", "queue-2"));
      for (;;) if ((await waitingOnALock()) >= 2) break;
    } finally {
      await other.query("COMMIT");
    }
    try {
      await expect(first).resolves.toMatchObject({ total: 1000 });
      await expect(second).resolves.toMatchObject({ total: 1000 });
    } finally {
      await keyShare.query("COMMIT");
      await keyShare.end();
    }
    expect(await stockOf("LOCK-QUEUE")).toBe(7);
  });
});
