/**
 * The reference for `npm run bench:webhook`: the first delivery of
 * `checkout.session.completed` handled with the thinnest stack that does the same I/O as our
 * intake — node:http, one `pg` pool, Stripe's own signature check, the statements the intake needs
 * at minimum (one CTE recording the event and moving the order, one marking it announced), the
 * PaymentIntent lookup and one keep-alive POST of shop/order.placed to the event API. No
 * framework, no ORM, no logging. It answers only what the benchmark sends it.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Pool } from "pg";
import Stripe from "stripe";

export interface ReferenceOptions {
  databaseUrl: string;
  stripeApiBase: string;
  eventApiUrl: string;
  webhookSecret: string;
  poolSize: number;
}

const recordSql = `
  WITH target AS (
    SELECT id, customer_id, email, total, currency FROM orders WHERE checkout_session_id = $1
  ), recorded AS (
    INSERT INTO stripe_events (id, type, order_id, processed_at)
    SELECT $2, $3, target.id, now() FROM target
    ON CONFLICT (id) DO NOTHING
    RETURNING order_id
  ), moved AS (
    UPDATE orders o SET status = 'authorized', payment_intent_id = $4, updated_at = now()
    FROM recorded WHERE o.id = recorded.order_id AND o.status = 'pending'
    RETURNING o.id
  ), logged AS (
    INSERT INTO order_timeline (order_id, kind, detail)
    SELECT moved.id, 'payment-authorized', jsonb_build_object('stripeEvent', $2::text) FROM moved
  )
  SELECT target.*, moved.id IS NOT NULL AS changed FROM target LEFT JOIN moved ON moved.id = target.id`;

const markSql = `
  WITH marked AS (
    UPDATE orders SET placed_event_sent_at = now(), updated_at = now()
    WHERE id = $1::uuid AND placed_event_sent_at IS NULL RETURNING id
  )
  INSERT INTO order_timeline (order_id, kind, detail)
  SELECT id, 'order-placed-sent', jsonb_build_object('stripeEvent', $2::text) FROM marked`;

function request(
  agent: http.Agent,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

export async function startReference(options: ReferenceOptions): Promise<{ url: string }> {
  const pool = new Pool({ connectionString: options.databaseUrl, max: options.poolSize });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const stripe = new Stripe("sk_test_bench");
  const stripeBase = new URL(options.stripeApiBase);
  const eventApi = new URL("/e/bench", options.eventApiUrl);

  const handle = async (raw: Buffer, signature: string): Promise<number> => {
    let event: Stripe.Event;
    try {
      event = stripe.webhooks.constructEvent(raw, signature, options.webhookSecret);
    } catch {
      return 400;
    }
    if (event.type !== "checkout.session.completed") return 200;
    const session = event.data.object;
    const paymentIntentId = typeof session.payment_intent === "string" ? session.payment_intent : null;
    if (!paymentIntentId) return 200;
    const intent = await request(
      agent,
      new URL(`/v1/payment_intents/${paymentIntentId}`, stripeBase),
      "GET",
      { authorization: "Bearer sk_test_bench" },
    );
    if ((JSON.parse(intent.body) as { status?: string }).status !== "requires_capture") return 200;
    const { rows } = await pool.query<{
      id: string;
      customer_id: string;
      email: string;
      total: number;
      currency: string;
      changed: boolean;
    }>(recordSql, [session.id, event.id, event.type, paymentIntentId]);
    const order = rows[0];
    if (!order?.changed) return 200;
    const sent = await request(
      agent,
      eventApi,
      "POST",
      { "content-type": "application/json" },
      JSON.stringify([
        {
          name: "shop/order.placed",
          id: `order-placed-${order.id}`,
          data: {
            orderId: order.id,
            customerId: order.customer_id,
            email: order.email,
            total: order.total,
            currency: order.currency,
            paymentIntentId,
          },
        },
      ]),
    );
    if (sent.status !== 200) throw new Error(`the event API answered ${sent.status}`);
    await pool.query(markSql, [order.id, event.id]);
    return 200;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      handle(Buffer.concat(chunks), String(req.headers["stripe-signature"] ?? "")).then(
        (status) => res.writeHead(status, { "content-type": "application/json" }).end('{"received":true}'),
        // Why, in the answer: bench:webhook prints the answers of a delivery whose order was not announced.
        (error: unknown) =>
          res
            .writeHead(500, { "content-type": "application/json" })
            .end(JSON.stringify({ error: error instanceof Error ? error.message : String(error) })),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
