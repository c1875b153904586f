import type { Prisma } from "../generated/prisma/client";

/**
 * The dispute statuses that keep a charge's money with the card network: a chargeback waiting for
 * the shop's answer or the bank's decision, and one the shop lost. Stripe refuses a refund of such
 * a charge (`charge_disputed`, the dispute's `is_charge_refundable` false): the cardholder gets the
 * money through the dispute, and a refund on top would pay them twice. An inquiry
 * (`warning_needs_response`, `warning_under_review`) is refundable at Stripe, and a refund is the
 * way to head it off; `won`, `warning_closed`, `prevented` and `charge_refunded` are over.
 */
export const moneyHoldingDisputeStatuses: readonly string[] = ["needs_response", "under_review", "lost"];

export interface DisputeHold {
  /** The disputed amount of the order's charge still held by open or lost chargebacks. */
  amount: number;
  disputes: { providerId: string; status: string; amount: number }[];
}

type DisputeReader = { dispute: Pick<Prisma.TransactionClient["dispute"], "findMany"> };

/** What the order's open or lost chargebacks hold of its charge (read in the caller's transaction). */
export async function disputeHoldOf(db: DisputeReader, orderId: string): Promise<DisputeHold> {
  const disputes = await db.dispute.findMany({
    where: { orderId, status: { in: [...moneyHoldingDisputeStatuses] } },
    orderBy: { createdAt: "asc" },
    select: { providerId: true, status: true, amount: true },
  });
  return { amount: disputes.reduce((sum, dispute) => sum + dispute.amount, 0), disputes };
}

/**
 * Whether open or lost chargebacks withhold a refund of `amount`: the refund would reach into the
 * disputed money, of which `refundable` (captured less refunded) still includes the held part.
 */
export function disputeWithholds(hold: DisputeHold, refundable: number, amount: number): boolean {
  return hold.amount > 0 && amount > refundable - hold.amount;
}

/** The alert's key for a refund refused by a dispute: one per dispute, however many refunds ask. */
export const disputedRefundAlertKey = (disputeId: string) => `refund-refused-disputed-${disputeId}`;
