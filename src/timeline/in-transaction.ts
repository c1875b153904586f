import type { Prisma } from "../db/client";
import type { TimelineDetail, TimelineKind } from "./kinds";

/**
 * The timeline entry of a change made in a caller's Prisma transaction (a refund's request and
 * its outcome, a released stock hold), written in that transaction so that the two commit
 * together. The Prisma model API, as the callers use it (docs/architecture.md, data idioms).
 */
export async function recordInTransaction(
  tx: Prisma.TransactionClient,
  orderId: string,
  kind: TimelineKind,
  detail: TimelineDetail = {},
): Promise<void> {
  await tx.orderTimelineEntry.create({ data: { orderId, kind, detail: detail as Prisma.InputJsonObject } });
}
