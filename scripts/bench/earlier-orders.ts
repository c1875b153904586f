/** Anything that runs a statement: a `pg` Client or Pool. */
interface Queryable {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

/** The product the earlier orders bought: out of stock, no movements, so no cron acts on it. */
export const earlierOrdersSku = "BENCH-EARLIER";

/**
 * Puts `count` completed orders of a year ago into the database, with the rows an order leaves
 * (its checkout request, line, stock hold and reservation, payment, parcel, e-mails, timeline
 * entries and Stripe event), and analyses it: a shop's database holds them before a benchmark's orders arrive. On a
 * near-empty table that autovacuum has analysed, the planner rightly reads its page or two whole
 * rather than through an index, so until it holds some ten pages (about 150 orders, 800 order
 * lines) every statement touching it, foreign-key checks included, counts a sequential scan: a
 * run's table counters then said more about when autovacuum first came by than about the code.
 */
export async function seedEarlierOrders(db: Queryable, count: number): Promise<void> {
  if (count <= 0) return;
  const ago = "now() - interval '400 days'";
  await db.query(
    `INSERT INTO products (sku, name, unit_price, currency, stock_on_hand, updated_at)
     VALUES ($1, 'Earlier item', 1000, 'usd', 0, ${ago}) ON CONFLICT (sku) DO NOTHING`,
    [earlierOrdersSku],
  );
  await db.query(
    `WITH made AS (
       INSERT INTO orders (id, customer_id, email, currency, total, status, checkout_session_id,
                           payment_intent_id, placed_event_sent_at, created_at, updated_at)
       SELECT gen_random_uuid(), 'cus-earlier-' || n, 'earlier' || n || '@example.com', 'usd', 1000,
              'completed', 'cs_earlier_' || n, 'pi_earlier_' || n, ${ago}, ${ago}, ${ago}
       FROM generate_series(1, $1::int) n
       RETURNING id, payment_intent_id AS pi
     ), lines AS (
       INSERT INTO order_lines (id, order_id, sku, name, unit_price, quantity)
       SELECT gen_random_uuid(), id, $2, 'Earlier item', 1000, 1 FROM made
     ), holds AS (
       INSERT INTO stock_holds (order_id, sku, quantity, status, expires_at, created_at, updated_at)
       SELECT id, $2, 1, 'converted', ${ago}, ${ago}, ${ago} FROM made
     ), reservations AS (
       INSERT INTO stock_reservations (order_id, sku, quantity, created_at, updated_at)
       SELECT id, $2, 1, ${ago}, ${ago} FROM made
     ), requests AS (
       INSERT INTO checkout_requests (order_id, customer_id, idempotency_key, request_hash, expires_at,
                                      created_at)
       SELECT id, 'cus-earlier-' || pi, 'key-' || pi, 'earlier', ${ago}, ${ago} FROM made
     ), paid AS (
       INSERT INTO payments (id, order_id, provider_id, status, currency, amount_authorized, amount_captured,
                             created_at, updated_at)
       SELECT gen_random_uuid(), id, pi, 'captured', 'usd', 1000, 1000, ${ago}, ${ago} FROM made
     ), parcels AS (
       INSERT INTO shipments (id, order_id, carrier, tracking_number, tracking_url, status, delivered_at,
                              created_at, updated_at)
       SELECT gen_random_uuid(), id, 'USPS', 'EARLIER' || pi, 'https://track.example/' || pi, 'delivered', ${ago}, ${ago}, ${ago}
       FROM made
     ), mails AS (
       INSERT INTO email_messages (id, idempotency_key, order_id, template, recipient, status, message_id,
                                   created_at, sent_at)
       SELECT gen_random_uuid(), t || '-' || id, id, t, 'earlier@example.com', 'sent', '<' || t || '-' || id || '@bench>',
              ${ago}, ${ago}
       FROM made CROSS JOIN (VALUES ('shipped'), ('review')) AS templates (t)
     ), entries AS (
       INSERT INTO order_timeline (order_id, kind, created_at)
       SELECT id, k, ${ago} FROM made CROSS JOIN (VALUES ('placed'), ('shipped'), ('completed')) AS kinds (k)
     )
     INSERT INTO stripe_events (id, type, order_id, received_at, processed_at)
     SELECT 'evt_earlier_' || pi, 'checkout.session.completed', id, ${ago}, ${ago} FROM made`,
    [count, earlierOrdersSku],
  );
  await db.query("ANALYZE");
}
