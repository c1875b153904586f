import { randomUUID } from "node:crypto";
import { sqlPool, type Database } from "../../db/client";
import type { OrderStatus } from "../../generated/prisma/enums";
import type { ProductView } from "../../inventory/inventory";
import { productsJsonSql, toProductView } from "../../inventory/prisma-inventory-repository";
import { HoldOutOfStock, releaseHolds } from "../../inventory/stock-holds";
import { orderLinesJsonSql, type OrderLineJson } from "../../db/order-lines-sql";
import { recordInTransaction } from "../../timeline/in-transaction";
import { timelineKindSql } from "../../timeline/kinds";
import type { CheckoutPricingTerms, QuotedShippingOption } from "../../payments/stripe-checkout";
import type { CheckoutDestination } from "./checkout-request";
import { storedPricingTerms } from "./pricing-terms";

/** The customer's Idempotency-Key is already taken by another order: nothing was written. */
export class IdempotencyKeyTaken extends Error {
  constructor(readonly customerId: string) {
    super(`Idempotency-Key already used by customer ${customerId}`);
    this.name = "IdempotencyKeyTaken";
  }
}

export interface PendingOrderInput {
  customerId: string;
  email: string;
  currency: string;
  lines: { sku: string; name: string; unitPrice: number; quantity: number }[];
  /** The client's Idempotency-Key, unique per customer. */
  idempotencyKey: string | null;
  /** Hash of the parsed request, to refuse the same key with another body. */
  requestHash: string;
  /** The Checkout Session's expires_at, and so the end of the stock hold. */
  expiresAt: Date;
  /** With a rate table: where it ships and the options quoted, kept to rebuild the request. */
  destination?: CheckoutDestination | null;
  shippingOptions?: QuotedShippingOption[] | null;
  /** Stripe Tax and codes as configured now, kept to rebuild the request (decision 0204). */
  pricingTerms?: CheckoutPricingTerms | null;
}

/** An order as checkout needs it to (re)build its Checkout Session request. */
export interface CheckoutOrder {
  orderId: string;
  status: OrderStatus;
  customerId: string;
  email: string;
  currency: string;
  checkoutSessionId: string | null;
  requestHash: string;
  expiresAt: Date;
  createdAt: Date;
  /** Sorted by SKU, so the session request is the same every time it is built. */
  lines: { sku: string; name: string; unitPrice: number; quantity: number }[];
  /** As stored at creation (null without a rate table): the session request is rebuilt from them. */
  destination: CheckoutDestination | null;
  shippingOptions: QuotedShippingOption[] | null;
  /** As stored at creation (null: no tax, no codes): the sweep sends the same parameters. */
  pricingTerms: CheckoutPricingTerms | null;
}

export interface CheckoutRepository {
  /**
   * All or nothing: the order (pending) with its lines, total and checkout request, and the
   * stock hold for every line. Throws HoldOutOfStock (nothing written) when a line is short, and
   * IdempotencyKeyTaken when the customer's Idempotency-Key is already taken. Answers with the
   * order as findCheckout would read it, so the caller need not read it back.
   */
  createPendingOrder(input: PendingOrderInput): Promise<{
    orderId: string;
    total: number;
    order: CheckoutOrder;
    /** Products this checkout took down to their low-stock threshold, not alerted yet. */
    lowStockSkus?: string[];
  }>;
  findByIdempotencyKey(customerId: string, idempotencyKey: string): Promise<CheckoutOrder | null>;
  /**
   * findByIdempotencyKey and the catalog's findProducts in one statement (every keyed checkout
   * asks both): the key's order, if any, and the products of `skus` as findProducts reads them.
   */
  findByIdempotencyKeyWithProducts(
    customerId: string,
    idempotencyKey: string,
    skus: string[],
  ): Promise<{ existing: CheckoutOrder | null; products: ProductView[] }>;
  findCheckout(orderId: string): Promise<CheckoutOrder | null>;
  /** Sets the session once: a replay with the same id changes nothing. False if another is set. */
  attachCheckoutSession(orderId: string, checkoutSessionId: string): Promise<boolean>;
  /**
   * The checkout cannot be paid: the order (if still pending) expires and its hold is released,
   * in one transaction.
   */
  abandon(orderId: string, reason: string): Promise<void>;
  /** Pending orders with no Checkout Session attached, created before `createdBefore`. */
  findHalfMade(createdBefore: Date, limit: number): Promise<string[]>;
}

function toCheckoutOrder(order: {
  id: string;
  status: OrderStatus;
  customerId: string;
  email: string;
  currency: string;
  checkoutSessionId: string | null;
  createdAt: Date;
  lines: { sku: string; name: string; unitPrice: number; quantity: number }[];
  checkout: {
    requestHash: string;
    expiresAt: Date;
    destination: unknown;
    shippingOptions: unknown;
    pricingTerms: unknown;
  } | null;
}): CheckoutOrder | null {
  if (!order.checkout) return null;
  return {
    orderId: order.id,
    status: order.status,
    customerId: order.customerId,
    email: order.email,
    currency: order.currency.trim(),
    checkoutSessionId: order.checkoutSessionId,
    requestHash: order.checkout.requestHash,
    expiresAt: order.checkout.expiresAt,
    createdAt: order.createdAt,
    lines: order.lines
      .map(({ sku, name, unitPrice, quantity }) => ({ sku, name, unitPrice, quantity }))
      .sort((a, b) => a.sku.localeCompare(b.sku)),
    ...storedShipping(order.checkout),
    pricingTerms: storedPricingTerms(order.checkout.pricingTerms),
  };
}

/** The JSONB columns as written by createPendingOrder (null for checkouts without a rate table). */
function storedShipping(row: { destination: unknown; shippingOptions: unknown }) {
  return {
    destination: (row.destination ?? null) as CheckoutDestination | null,
    shippingOptions: (row.shippingOptions ?? null) as QuotedShippingOption[] | null,
  };
}

const checkoutInclude = {
  lines: true,
  checkout: {
    select: {
      requestHash: true,
      expiresAt: true,
      destination: true,
      shippingOptions: true,
      pricingTerms: true,
    },
  },
} as const;

/**
 * A keyed checkout's lookup and its cart's products, one statement: one row always, the key's
 * order's columns null when the key is free.
 */
export const keyedLookupStatement = `
  WITH found AS (
    SELECT o.id, o.status, o.customer_id, o.email, o.currency, o.checkout_session_id, o.created_at,
           c.request_hash, c.expires_at, c.destination, c.shipping_options, c.pricing_terms,
           ${orderLinesJsonSql("o")} AS lines
    FROM checkout_requests c JOIN orders o ON o.id = c.order_id
    WHERE c.customer_id = $1 AND c.idempotency_key = $2
  )
  SELECT f.*, ${productsJsonSql("$3")} AS products FROM (SELECT 1) one LEFT JOIN found f ON true`;

type KeyedLookupRow = {
  products: Parameters<typeof toProductView>[0][];
} & (
  | {
      id: string;
      status: OrderStatus;
      customer_id: string;
      email: string;
      currency: string;
      checkout_session_id: string | null;
      created_at: Date;
      request_hash: string;
      expires_at: Date;
      destination: unknown;
      shipping_options: unknown;
      pricing_terms: unknown;
      lines: OrderLineJson[];
    }
  | { id: null; [column: string]: unknown }
);

/** PostgreSQL's deadlock_detected: the victim's statement (and with it its transaction) rolled back. */
const deadlockDetected = "40P01";
/** Runs of the checkout's statement when PostgreSQL picks it as a deadlock's victim. */
const checkoutStatementRuns = 3;

/**
 * Runs the checkout's one statement again when PostgreSQL broke a deadlock by aborting it. Two
 * checkouts queued behind a stock write on one product, while another transaction holds the product
 * FOR KEY SHARE (a fulfilment's foreign-key check), deadlock on the row's tuple lock (docs/benchmarks.md,
 * "NOTIFY's commit lock"; test/orders/checkout-product-lock.test.ts). The statement is its own
 * transaction and was rolled back whole, so running it again cannot take stock twice or make a
 * second order; the other checkout has gone through by then. PostgreSQL's own advice for deadlocks.
 */
async function retryDeadlockVictim<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if ((error as { code?: unknown }).code !== deadlockDetected || attempt >= checkoutStatementRuns)
        throw error;
    }
  }
}

export function createCheckoutRepository(db: Database): CheckoutRepository {
  // Every checkout creates an order and attaches its session: raw pg, one round trip each.
  const sql = sqlPool(db);
  return {
    async createPendingOrder(input) {
      const total = input.lines.reduce((sum, line) => sum + line.unitPrice * line.quantity, 0);
      const orderId = randomUUID();
      const lines = [...input.lines].sort((a, b) => a.sku.localeCompare(b.sku));
      // One statement instead of an interactive transaction: under load, its ~10 round trips
      // outlasted Prisma's 5 s transaction limit while the hot product row stayed locked
      // (docs/decisions/0004-checkout-in-one-statement.md).
      // The product rows are locked first, in SKU order (two checkouts never deadlock), and read at
      // their latest committed stock; the verdict gates every write, so the order, its lines, its
      // checkout request, its timeline entry, the stock taken and the holds land together or not at
      // all. The lock lasts only as long as the statement. It is FOR NO KEY UPDATE, the lock the
      // UPDATE below takes anyway: it serialises checkouts and stock writes on the row as FOR
      // UPDATE did, but not the foreign-key checks (FOR KEY SHARE) of other transactions writing
      // a row that names the product (a fulfilment's reservation, its ledger row), which FOR
      // UPDATE made wait for this statement's commit and made this statement wait for theirs
      // (docs/decisions/0207-checkout-locks-products-for-no-key-update.md).
      let rows: {
        sku: string;
        requested: number;
        available: number;
        ok: boolean;
        created_at: Date | null;
        low: boolean;
      }[];
      try {
        ({ rows } = await retryDeadlockVictim(() =>
          sql.query(
            `WITH req AS (
            SELECT * FROM unnest($2::text[], $3::text[], $4::int[], $5::int[], $6::uuid[])
              AS r (sku, name, unit_price, quantity, line_id)
          ),
          locked AS (
            SELECT p.sku, p.stock_on_hand FROM products p
            WHERE p.sku IN (SELECT sku FROM req) AND p.archived_at IS NULL
            ORDER BY p.sku FOR NO KEY UPDATE
          ),
          verdict AS (
            SELECT (SELECT count(*) FROM req) = (
              SELECT count(*) FROM locked l JOIN req r USING (sku) WHERE l.stock_on_hand >= r.quantity
            ) AS ok
          ),
          taken AS (
            UPDATE products p SET stock_on_hand = p.stock_on_hand - r.quantity, updated_at = now()
            FROM req r, verdict v WHERE v.ok AND p.sku = r.sku
            RETURNING p.sku, p.stock_on_hand,
              -- Down to its threshold and not alerted yet: the caller sends shop/stock.low.
              (p.low_stock_threshold IS NOT NULL AND p.stock_on_hand <= p.low_stock_threshold
                AND p.low_stock_alerted_at IS NULL) AS low
          ),
          moved AS (
            -- The hold's ledger row, in the same statement (src/inventory/stock-ledger.ts).
            INSERT INTO stock_movements (sku, delta, reason, actor, order_id, stock_after)
            SELECT t.sku, -r.quantity, 'reserved', 'checkout', $1::uuid, t.stock_on_hand
            FROM taken t JOIN req r USING (sku)
          ),
          ord AS (
            INSERT INTO orders (id, customer_id, email, status, currency, total, created_at, updated_at)
            SELECT $1::uuid, $7, $8, 'pending', $9, $10, now(), now() FROM verdict WHERE ok
            RETURNING id, created_at
          ),
          order_lines_made AS (
            INSERT INTO order_lines (id, order_id, sku, name, unit_price, quantity)
            SELECT r.line_id, ord.id, r.sku, r.name, r.unit_price, r.quantity FROM req r, ord
          ),
          checkout_made AS (
            INSERT INTO checkout_requests (order_id, customer_id, idempotency_key, request_hash, expires_at, created_at,
                                           destination, shipping_options, pricing_terms)
            SELECT ord.id, $7, $11, $12, $13, now(), $15::jsonb, $16::jsonb, $17::jsonb FROM ord
          ),
          entry AS (
            INSERT INTO order_timeline (order_id, kind, detail)
            SELECT ord.id, ${timelineKindSql("checkout-started")}, $14::jsonb FROM ord
          ),
          holds AS (
            INSERT INTO stock_holds (order_id, sku, quantity, status, expires_at, created_at, updated_at)
            SELECT ord.id, r.sku, r.quantity, 'held', $13, now(), now() FROM req r, ord
          )
          SELECT r.sku, r.quantity AS requested, COALESCE(l.stock_on_hand, 0) AS available,
                 (SELECT ok FROM verdict) AS ok, (SELECT created_at FROM ord) AS created_at,
                 COALESCE((SELECT t.low FROM taken t WHERE t.sku = r.sku), false) AS low
          FROM req r LEFT JOIN locked l USING (sku) ORDER BY r.sku`,
            [
              orderId,
              lines.map((line) => line.sku),
              lines.map((line) => line.name),
              lines.map((line) => line.unitPrice),
              lines.map((line) => line.quantity),
              lines.map(() => randomUUID()),
              input.customerId,
              input.email,
              input.currency,
              total,
              input.idempotencyKey,
              input.requestHash,
              input.expiresAt,
              JSON.stringify({ total, currency: input.currency, holdUntil: input.expiresAt.toISOString() }),
              input.destination ? JSON.stringify(input.destination) : null,
              input.shippingOptions ? JSON.stringify(input.shippingOptions) : null,
              input.pricingTerms ? JSON.stringify(input.pricingTerms) : null,
            ],
          ),
        ));
      } catch (error) {
        const { code, constraint } = error as { code?: unknown; constraint?: unknown };
        if (code === "23505" && constraint === "checkout_requests_customer_id_idempotency_key_key")
          throw new IdempotencyKeyTaken(input.customerId);
        throw error;
      }
      const createdAt = rows[0]?.created_at;
      if (!rows[0]?.ok || !createdAt) {
        const short = rows.find((row) => row.available < row.requested) ?? rows[0];
        throw new HoldOutOfStock(short?.sku ?? "", short?.requested ?? 0, short?.available ?? 0);
      }
      const order: CheckoutOrder = {
        orderId,
        status: "pending",
        customerId: input.customerId,
        email: input.email,
        currency: input.currency,
        checkoutSessionId: null,
        requestHash: input.requestHash,
        expiresAt: input.expiresAt,
        createdAt,
        lines: lines.map(({ sku, name, unitPrice, quantity }) => ({ sku, name, unitPrice, quantity })),
        destination: input.destination ?? null,
        shippingOptions: input.shippingOptions ?? null,
        pricingTerms: input.pricingTerms ?? null,
      };
      return { orderId, total, order, lowStockSkus: rows.filter((row) => row.low).map((row) => row.sku) };
    },

    async findByIdempotencyKey(customerId, idempotencyKey) {
      const request = await db.checkoutRequest.findUnique({
        where: { customerId_idempotencyKey: { customerId, idempotencyKey } },
        select: { order: { include: checkoutInclude } },
      });
      return request ? toCheckoutOrder(request.order) : null;
    },

    async findByIdempotencyKeyWithProducts(customerId, idempotencyKey, skus) {
      const { rows } = await sql.query<KeyedLookupRow>(keyedLookupStatement, [
        customerId,
        idempotencyKey,
        skus,
      ]);
      const row = rows[0];
      const products = (row?.products ?? []).map(toProductView);
      if (!row || row.id === null) return { existing: null, products };
      return {
        existing: {
          orderId: row.id,
          status: row.status,
          customerId: row.customer_id,
          email: row.email,
          currency: row.currency.trim(),
          checkoutSessionId: row.checkout_session_id,
          requestHash: row.request_hash,
          expiresAt: row.expires_at,
          createdAt: row.created_at,
          lines: row.lines,
          ...storedShipping({ destination: row.destination, shippingOptions: row.shipping_options }),
          pricingTerms: storedPricingTerms(row.pricing_terms),
        },
        products,
      };
    },

    async findCheckout(orderId) {
      const order = await db.order.findUnique({ where: { id: orderId }, include: checkoutInclude });
      return order ? toCheckoutOrder(order) : null;
    },

    async attachCheckoutSession(orderId, checkoutSessionId) {
      // One statement on the usual path (every checkout): set once, with its timeline entry.
      const { rows } = await sql.query<{ attached: number }>(
        `WITH attached AS (
          UPDATE orders SET checkout_session_id = $2, updated_at = now()
          WHERE id = $1::uuid AND checkout_session_id IS NULL
          RETURNING id
        ),
        entry AS (
          INSERT INTO order_timeline (order_id, kind, detail)
          SELECT id, ${timelineKindSql("checkout-session-created")}, $3::jsonb FROM attached
        )
        SELECT count(*)::int AS attached FROM attached`,
        [orderId, checkoutSessionId, JSON.stringify({ checkoutSessionId })],
      );
      if ((rows[0]?.attached ?? 0) > 0) return true;
      // Not attached now: a replay finds its own session (read afresh, after any concurrent attach).
      const order = await db.order.findUnique({
        where: { id: orderId },
        select: { checkoutSessionId: true },
      });
      return order?.checkoutSessionId === checkoutSessionId;
    },

    async abandon(orderId, reason) {
      await db.$transaction(async (tx) => {
        const expired = await tx.order.updateMany({
          where: { id: orderId, status: "pending" },
          data: { status: "expired" },
        });
        if (expired.count === 0) return;
        await recordInTransaction(tx, orderId, "checkout-failed", { reason });
        await releaseHolds(tx, orderId, reason);
      });
    },

    async findHalfMade(createdBefore, limit) {
      const orders = await db.order.findMany({
        where: { status: "pending", checkoutSessionId: null, createdAt: { lt: createdBefore } },
        select: { id: true },
        orderBy: { createdAt: "asc" },
        take: limit,
      });
      return orders.map((order) => order.id);
    },
  };
}
