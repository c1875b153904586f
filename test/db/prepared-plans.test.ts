import pg from "pg";
import {
  createDatabase,
  genericPlansFromOrders,
  sqlPool,
  statementName,
  type Database,
} from "../../src/db/client";
import { createIntakeRepository } from "../../src/orders/intake/intake-repository";
import { seedEarlierOrders } from "../../scripts/bench/earlier-orders";
import { createTestDatabase, type TestDatabase } from "../support/database";

/**
 * The hot statements are named (prepared once per connection). From its sixth execution
 * PostgreSQL may keep a generic plan, costed for the table as it was at its last ANALYZE: a plan
 * made while `orders` held a page or two is a sequential scan, and it stayed one as the table
 * grew until autovacuum analysed it again, so `bench:orders` read `orders` whole several times
 * per order in some runs.
 */
describe("prepared statements on the app's pool keep using indexes as the tables grow", () => {
  let database: TestDatabase;
  let app: Database;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase();
    // One connection: every statement below runs on it, and so does the counter read.
    app = createDatabase(database.url, { maxConnections: 1 });
    pool = sqlPool(app);
  });
  afterAll(async () => {
    await app.$disconnect();
    await database.drop();
  });

  async function addOrders(count: number): Promise<string[]> {
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO orders (id, customer_id, email, currency, total, updated_at)
       SELECT gen_random_uuid(), 'cus-' || n, 'c' || n || '@example.com', 'usd', 1000, now()
       FROM generate_series(1, $1::int) n RETURNING id`,
      [count],
    );
    return rows.map((row) => row.id);
  }

  /** Sequential scans of `orders` by `work` on this connection (its own counters, exact). */
  async function orderScans(work: () => Promise<void>): Promise<number> {
    const scans = async (): Promise<number> => {
      const { rows } = await pool.query<{ n: string }>(
        "SELECT coalesce(seq_scan, 0)::text AS n FROM pg_stat_xact_user_tables WHERE relname = 'orders'",
      );
      return Number(rows[0]?.n ?? 0);
    };
    await pool.query("BEGIN");
    try {
      const before = await scans();
      await work();
      return (await scans()) - before;
    } finally {
      await pool.query("ROLLBACK");
    }
  }

  test("an intake lookup by id, first run on a near-empty table, reads by index once it has grown", async () => {
    const intake = createIntakeRepository(app);
    const early = await addOrders(5);
    // As autovacuum does early in a run: fifty changed rows are enough for it to analyse a table.
    await pool.query("ANALYZE orders");
    // More than the five custom plans PostgreSQL makes before it may settle on a generic one.
    for (let i = 0; i < 10; i++) await intake.findOrder(early[i % early.length] as string);

    const later = await addOrders(3_000);
    const scans = await orderScans(async () => {
      for (let i = 0; i < 10; i++) await intake.findOrder(later[i * 300] as string);
    });
    expect(scans).toBe(0);
  });
});

/**
 * bench:orders' table counters: on a near-empty `orders` that autovacuum has analysed, every
 * statement touching it is rightly a sequential scan of its page or two, so whether a run counted
 * some 1,500 scans more depended on when autovacuum first came by. The benchmark starts from
 * earlier orders, analysed, as a shop's database has them.
 */
describe("bench:orders starts from a table of earlier orders", () => {
  let database: TestDatabase;
  let app: Database;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase();
    app = createDatabase(database.url, { maxConnections: 1 });
    pool = sqlPool(app);
  });
  afterAll(async () => {
    await app.$disconnect();
    await database.drop();
  });

  const newOrder = async (): Promise<string> => {
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO orders (id, customer_id, email, currency, total, updated_at)
       VALUES (gen_random_uuid(), 'cus-new', 'new@example.com', 'usd', 1000, now()) RETURNING id`,
    );
    return (rows[0] as { id: string }).id;
  };

  /** Sequential scans of `orders` while a new order gets a timeline entry and is looked up. */
  async function scansForOneOrder(): Promise<number> {
    const intake = createIntakeRepository(app);
    const scans = async (): Promise<number> => {
      const { rows } = await pool.query<{ n: string }>(
        "SELECT coalesce(seq_scan, 0)::text AS n FROM pg_stat_xact_user_tables WHERE relname = 'orders'",
      );
      return Number(rows[0]?.n ?? 0);
    };
    await pool.query("BEGIN");
    try {
      const before = await scans();
      const orderId = await newOrder();
      await pool.query("INSERT INTO order_timeline (order_id, kind) VALUES ($1, 'placed')", [orderId]);
      await intake.findOrder(orderId);
      return (await scans()) - before;
    } finally {
      await pool.query("ROLLBACK");
    }
  }

  test("analysed while near-empty, the table is read whole; seeded with earlier orders, by index", async () => {
    for (let i = 0; i < 20; i++) await newOrder();
    await pool.query("ANALYZE orders");
    expect(await scansForOneOrder()).toBeGreaterThan(0);

    await seedEarlierOrders(pool, 2_000);
    expect(await scansForOneOrder()).toBe(0);
  });
});

/**
 * Decision 0202: planning each run of every statement was most of PostgreSQL's extra time per
 * order over the I/O floor. The pool sends the app's raw statements named after their text and
 * lets PostgreSQL keep generic plans once `orders` is big enough that a plan made now uses its
 * indexes whatever the table grows to; while it is small, every run is planned (decision 0141).
 */
describe("generic plans once `orders` holds a shop's orders, custom plans while it is small", () => {
  const lookup = "SELECT id FROM orders WHERE id = $1::uuid";

  /** Its plans so far on the connection, as PostgreSQL counts them (pg_prepared_statements). */
  async function plansOf(pool: pg.Pool, text: string): Promise<{ generic: number; custom: number }> {
    const { rows } = await pool.query<{ generic: number; custom: number }>(
      "SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = $1",
      [statementName(text)],
    );
    return rows[0] ?? { generic: 0, custom: 0 };
  }

  async function orderScans(pool: pg.Pool, work: () => Promise<void>): Promise<number> {
    const scans = async (): Promise<number> => {
      const { rows } = await pool.query<{ n: string }>(
        "SELECT coalesce(seq_scan, 0)::text AS n FROM pg_stat_xact_user_tables WHERE relname = 'orders'",
      );
      return Number(rows[0]?.n ?? 0);
    };
    await pool.query("BEGIN");
    try {
      const before = await scans();
      await work();
      return (await scans()) - before;
    } finally {
      await pool.query("ROLLBACK");
    }
  }

  test("opened on analysed earlier orders: generic plans from the sixth run, still by index after the table grew", async () => {
    const database = await createTestDatabase();
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    const app = createDatabase(database.url, { maxConnections: 1 });
    try {
      await seedEarlierOrders(admin, 2 * genericPlansFromOrders);
      const pool = sqlPool(app);
      const { rows: mode } = await pool.query<{ plan_cache_mode: string }>("SHOW plan_cache_mode");
      expect(mode[0]?.plan_cache_mode).toBe("auto");
      const { rows: ids } = await pool.query<{ id: string }>("SELECT id FROM orders LIMIT $1", [10]);
      for (const { id } of ids) await pool.query(lookup, [id]);
      const plans = await plansOf(pool, lookup);
      expect(plans.custom + plans.generic).toBe(10);
      expect(plans.generic).toBeGreaterThan(0);

      const { rows: later } = await admin.query<{ id: string }>(
        `INSERT INTO orders (id, customer_id, email, currency, total, updated_at)
         SELECT gen_random_uuid(), 'cus-later-' || n, 'l' || n || '@example.com', 'usd', 1000, now()
         FROM generate_series(1, 3000) n RETURNING id`,
      );
      const scans = await orderScans(pool, async () => {
        for (let i = 0; i < 10; i++) await pool.query(lookup, [later[i * 300]?.id]);
      });
      expect(scans).toBe(0);
      expect((await plansOf(pool, lookup)).generic).toBeGreaterThan(plans.generic);
    } finally {
      await admin.end();
      await app.$disconnect();
      await database.drop();
    }
  });

  test("opened on a near-empty table: every run of a named statement planned", async () => {
    const database = await createTestDatabase();
    const app = createDatabase(database.url, { maxConnections: 1 });
    try {
      const pool = sqlPool(app);
      const { rows: mode } = await pool.query<{ plan_cache_mode: string }>("SHOW plan_cache_mode");
      expect(mode[0]?.plan_cache_mode).toBe("force_custom_plan");
      const { rows } = await pool.query<{ id: string }>(
        `INSERT INTO orders (id, customer_id, email, currency, total, updated_at)
         VALUES (gen_random_uuid(), 'cus-1', 'c1@example.com', 'usd', 1000, now()) RETURNING id`,
      );
      for (let i = 0; i < 10; i++) await pool.query(lookup, [rows[0]?.id]);
      expect(await plansOf(pool, lookup)).toEqual({ generic: 0, custom: 10 });
    } finally {
      await app.$disconnect();
      await database.drop();
    }
  });
});
