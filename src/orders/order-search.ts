import { z } from "zod";
import type { Database, Prisma } from "../db/client";
import { AppError } from "../errors";
import { OrderStatus } from "../generated/prisma/enums";
import { expiryAlertedKind } from "../recovery/expiring-authorizations";
import { stalledAfterMs } from "../recovery/stalled-orders";

/** "Needs attention" filters of the ops console and `GET /api/orders?attention=`. */
export const attentionFilters = [
  "any",
  "failed",
  "payment_failed",
  "stock",
  "authorization_expiring",
  "stalled",
  "reconciliation",
] as const;
export type AttentionFilter = (typeof attentionFilters)[number];

export const orderSearchQuery = z
  .object({
    status: z.enum(OrderStatus).optional(),
    attention: z.enum(attentionFilters).optional(),
    q: z.string().trim().max(200).optional(),
    cursor: z.uuid().optional(),
    limit: z.coerce.number().int().min(1).max(100).default(25),
  })
  .strict();

export type OrderSearch = z.input<typeof orderSearchQuery>;

/** Parses query parameters (empty ones are absent), naming what is wrong. */
export function parseOrderSearch(query: Record<string, unknown>): z.output<typeof orderSearchQuery> {
  const present = Object.fromEntries(
    Object.entries(query).filter(([, value]) => value !== "" && value !== undefined),
  );
  const parsed = orderSearchQuery.safeParse(present);
  if (!parsed.success) {
    throw new AppError(
      "validation_failed",
      parsed.error.issues.map((issue) => `${issue.path.join(".") || "query"}: ${issue.message}`).join("; "),
    );
  }
  return parsed.data;
}

/** Orders a reconciliation report names (the latest report of each day: a re-run replaces it). */
async function reconciledOrderIds(db: Database): Promise<string[]> {
  const rows = await db.reconciliationMismatch.findMany({
    where: { orderId: { not: null } },
    distinct: ["orderId"],
    select: { orderId: true },
    take: 1_000,
  });
  return rows.flatMap((row) => (row.orderId ? [row.orderId] : []));
}

function attentionWhere(
  filter: AttentionFilter,
  now: Date,
  reconciled: readonly string[],
): Prisma.OrderWhereInput {
  const failedRun: Prisma.OrderWhereInput = { timeline: { some: { kind: "run-failed" } } };
  const byFilter: Record<Exclude<AttentionFilter, "any">, Prisma.OrderWhereInput> = {
    // A fulfilment run that failed for good (recorded with the alert), or a flag set for ops.
    failed: { OR: [failedRun, { attentionReason: { not: null } }], NOT: { status: "payment_failed" } },
    payment_failed: { status: "payment_failed" },
    stock: { OR: [{ status: "cancelled_out_of_stock" }, { timeline: { some: { kind: "out-of-stock" } } }] },
    authorization_expiring: {
      status: { in: ["authorized", "fulfilling"] },
      timeline: { some: { kind: expiryAlertedKind } },
    },
    // What the recovery sweep would pick up: placed, and untouched for a while.
    stalled: {
      status: { in: ["authorized", "paid"] },
      updatedAt: { lt: new Date(now.getTime() - stalledAfterMs) },
    },
    // Named by a mismatch of a daily reconciliation against Stripe and the carrier.
    reconciliation: { id: { in: [...reconciled] } },
  };
  if (filter === "any") return { OR: Object.values(byFilter) };
  return byFilter[filter];
}

function searchWhere(q: string): Prisma.OrderWhereInput {
  if (z.uuid().safeParse(q).success) return { id: q };
  if (q.startsWith("cs_")) return { checkoutSessionId: q };
  if (q.startsWith("pi_")) return { OR: [{ paymentIntentId: q }, { payment: { providerId: q } }] };
  if (q.includes("@")) return { email: { contains: q, mode: "insensitive" } };
  return { OR: [{ customerId: q }, { email: { contains: q, mode: "insensitive" } }] };
}

/** Newest first, `limit` per page; `nextCursor` is the id to pass as `cursor` for the next page. */
export async function searchOrders(
  db: Database,
  search: z.output<typeof orderSearchQuery>,
  now = new Date(),
) {
  const where: Prisma.OrderWhereInput = {
    AND: [
      search.status ? { status: search.status } : {},
      search.attention
        ? attentionWhere(
            search.attention,
            now,
            search.attention === "any" || search.attention === "reconciliation"
              ? await reconciledOrderIds(db)
              : [],
          )
        : {},
      search.q ? searchWhere(search.q) : {},
    ],
  };
  const rows = await db.order.findMany({
    where,
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: search.limit + 1,
    ...(search.cursor ? { cursor: { id: search.cursor }, skip: 1 } : {}),
    include: {
      lines: { select: { quantity: true } },
      payment: { select: { status: true, providerId: true } },
    },
  });
  const page = rows.slice(0, search.limit);
  return {
    orders: page.map((order) => ({
      id: order.id,
      email: order.email,
      customerId: order.customerId,
      status: order.status,
      total: order.total,
      currency: order.currency,
      items: order.lines.reduce((sum, line) => sum + line.quantity, 0),
      paymentStatus: order.payment?.status ?? null,
      paymentIntentId: order.paymentIntentId,
      checkoutSessionId: order.checkoutSessionId,
      attentionReason: order.attentionReason,
      createdAt: order.createdAt,
      updatedAt: order.updatedAt,
    })),
    nextCursor: rows.length > search.limit ? (page[page.length - 1]?.id ?? null) : null,
  };
}

export type OrderListItem = Awaited<ReturnType<typeof searchOrders>>["orders"][number];
