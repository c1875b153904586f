import type pg from "pg";
import { createDatabase, sqlPool, type Database } from "../../src/db/client";
import { createLogger } from "../../src/logger";
import { createEmailSender } from "../../src/notifications/email-sender";
import type { EmailTransport } from "../../src/notifications/email-transport";
import { createTestDatabase, type TestDatabase } from "../support/database";

/**
 * The outbox cron drains every minute. Its condition `status <> 'sent'` cannot use the
 * (status, next_attempt_at) index, so without an index of its own the drain read the whole
 * e-mail history each time: a cost that grows with every order a shop has ever had.
 */
describe("the outbox drain reads the messages waiting, not the e-mail history", () => {
  let database: TestDatabase;
  let app: Database;
  let pool: pg.Pool;
  const sent: string[] = [];
  const transport: EmailTransport = {
    kind: "smtp",
    send: async (email) => {
      sent.push(email.messageId);
      return { providerMessageId: `<${email.messageId}>` };
    },
    close: () => undefined,
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    // One connection: the drain's statements and the counter reads share its transaction.
    app = createDatabase(database.url, { maxConnections: 1 });
    pool = sqlPool(app);
    // A shop's history: thousands of sent messages, and one waiting for a retry.
    await pool.query(
      `INSERT INTO email_messages (id, idempotency_key, template, recipient, status, message_id,
                                   subject, body_text, body_html, sent_at, attempts)
       SELECT gen_random_uuid(), 'shipped-old-' || n, 'shipped', 'c' || n || '@example.com', 'sent',
              '<old-' || n || '@shop.example>', 'Shipped', 'text', '<p>html</p>', now(), 1
       FROM generate_series(1, 5000) n`,
    );
    await pool.query(
      `INSERT INTO email_messages (id, idempotency_key, template, recipient, status, message_id,
                                   subject, body_text, body_html, attempts, next_attempt_at)
       VALUES (gen_random_uuid(), 'shipped-waiting', 'shipped', 'late@example.com', 'failed', '<waiting@shop.example>',
               'Shipped', 'text', '<p>html</p>', 1, now() - interval '1 minute')`,
    );
    await pool.query("ANALYZE email_messages");
  });
  afterAll(async () => {
    await app.$disconnect();
    await database.drop();
  });

  test("a drain sends the one waiting message and scans no table of sent ones", async () => {
    const outbox = createEmailSender({
      db: app,
      transport,
      from: "Shop <orders@shop.example>",
      logger: createLogger({ level: "silent" }),
    });
    const counters = async () => {
      const { rows } = await pool.query<{ scans: string; read: string }>(
        `SELECT coalesce(seq_scan, 0)::text AS scans,
                (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text AS read
         FROM pg_stat_xact_user_tables WHERE relname = 'email_messages'`,
      );
      return { scans: Number(rows[0]?.scans ?? 0), read: Number(rows[0]?.read ?? 0) };
    };
    await pool.query("BEGIN");
    try {
      const before = await counters();
      const drained = await outbox.drain();
      const after = await counters();
      expect(drained).toEqual({ sent: 1, retrying: 0, gaveUp: 0 });
      expect(sent).toEqual(["<waiting@shop.example>"]);
      expect(after.scans - before.scans).toBe(0);
      // The waiting row, found and then leased and marked sent by its key: a handful of rows.
      expect(after.read - before.read).toBeLessThan(10);
    } finally {
      await pool.query("ROLLBACK");
    }
  });
});
