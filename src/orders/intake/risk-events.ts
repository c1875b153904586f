import type Stripe from "stripe";
import type { Alerter } from "../../alerts";
import type { Database } from "../../db/client";
import type { Logger } from "../../logger";
import type { Timeline } from "../../timeline/timeline";
import type { Holds } from "../hold-order";
import type { RefundEventResult } from "./refund-events";

/** Disputes and Radar: what puts a payment in doubt after the checkout. */
export const riskEventTypes = [
  "charge.dispute.created",
  "charge.dispute.updated",
  "charge.dispute.closed",
  "charge.dispute.funds_withdrawn",
  "charge.dispute.funds_reinstated",
  "review.opened",
  "review.closed",
  "radar.early_fraud_warning.created",
];

/** Stripe's final dispute statuses: nothing reopens a dispute that has one. */
const closedDisputeStatuses: string[] = ["won", "lost", "warning_closed", "prevented", "charge_refunded"];

export const isRiskEvent = (event: Stripe.Event): boolean => riskEventTypes.includes(event.type);

export interface RiskEventsDeps {
  db: Database;
  stripe: Stripe;
  holds: Pick<Holds, "placeHold" | "releaseHold">;
  timeline: Pick<Timeline, "record">;
  alerts: Pick<Alerter, "notify">;
  logger: Logger;
}

const idOf = (value: string | { id: string } | null | undefined): string | null =>
  value == null ? null : typeof value === "string" ? value : value.id;
const iso = (unix: number | null | undefined) => (unix ? new Date(unix * 1000).toISOString() : undefined);

export interface RiskEvents {
  handle(event: Stripe.Event): Promise<RefundEventResult>;
}

/**
 * A dispute puts an unshipped order on hold and tells ops the amount, the reason, the evidence due
 * date and what the order can offer as evidence; a Radar review holds the label until it closes
 * approved; a review closed otherwise, or an early fraud warning, keeps (or puts) the order on
 * hold for ops. Every event is on the order's timeline, which the console shows. The hold is the
 * fulfilment hold (src/orders/hold-order.ts): a held run buys no label until it is released.
 * Timeline entries are keyed by the Stripe object (and event), in the timeline's once-per-key
 * column, so a redelivered event records nothing twice.
 */
export function createRiskEvents(deps: RiskEventsDeps): RiskEvents {
  const { db } = deps;
  const logger = deps.logger.child({ component: "risk-events" });

  async function intentOf(object: { payment_intent?: unknown; charge?: unknown }): Promise<string | null> {
    const direct = idOf(object.payment_intent as string | { id: string } | null);
    if (direct) return direct;
    const chargeId = idOf(object.charge as string | { id: string } | null);
    if (!chargeId) return null;
    return idOf((await deps.stripe.charges.retrieve(chargeId)).payment_intent);
  }

  /** What the order can offer as evidence: tracking, delivery, the e-mails it was sent. */
  async function evidenceOf(orderId: string) {
    const order = await db.order.findUnique({
      where: { id: orderId },
      select: {
        shipments: {
          where: { supersededAt: null },
          orderBy: { parcelNumber: "asc" },
          select: { carrier: true, trackingNumber: true, deliveredAt: true },
        },
        emails: { where: { status: "sent" }, select: { template: true, sentAt: true } },
      },
    });
    return {
      // Every parcel: the evidence is the whole order's delivery.
      trackingNumber:
        order?.shipments.map((parcel) => `${parcel.carrier} ${parcel.trackingNumber}`).join(", ") || "none",
      deliveredAt:
        order && order.shipments.length > 0 && order.shipments.every((parcel) => parcel.deliveredAt)
          ? order.shipments
              .map((parcel) => parcel.deliveredAt?.toISOString() ?? "")
              .sort()
              .slice(-1)[0]
          : "not delivered",
      emailsSent:
        order?.emails.map((e) => `${e.template} ${e.sentAt?.toISOString() ?? ""}`.trim()).join(", ") ||
        "none",
    };
  }

  /**
   * The dispute as its latest event has it, one row per Stripe dispute id: a redelivered event
   * writes the same row again, one older than the row (Stripe does not order deliveries) changes
   * nothing. The money is the dispute's balance transactions: negative ones withdrawn, positive
   * ones reinstated, the fees apart.
   */
  async function recordDispute(orderId: string, dispute: Stripe.Dispute, eventCreatedAt: Date) {
    const transactions = dispute.balance_transactions ?? [];
    const state = {
      status: dispute.status,
      amount: dispute.amount,
      currency: dispute.currency,
      reason: dispute.reason,
      evidenceDueBy: dispute.evidence_details?.due_by
        ? new Date(dispute.evidence_details.due_by * 1000)
        : null,
      amountWithdrawn: transactions.reduce((sum, t) => sum + (t.amount < 0 ? -t.amount : 0), 0),
      amountReinstated: transactions.reduce((sum, t) => sum + (t.amount > 0 ? t.amount : 0), 0),
      fees: transactions.reduce((sum, t) => sum + t.fee, 0),
      eventCreatedAt,
    };
    try {
      await db.dispute.create({ data: { orderId, providerId: dispute.id, ...state } });
      return;
    } catch (error) {
      // Another delivery of this dispute wrote the row first: bring it up to date below.
      if ((error as { code?: string }).code !== "P2002") throw error;
    }
    // Event times are in seconds, so two events of one second tie: a closed dispute never goes
    // back to an open state on a tie (or ever).
    const closed = closedDisputeStatuses.includes(dispute.status);
    await db.dispute.updateMany({
      where: {
        providerId: dispute.id,
        eventCreatedAt: { lte: eventCreatedAt },
        ...(closed ? {} : { status: { notIn: closedDisputeStatuses } }),
      },
      data: state,
    });
  }

  return {
    async handle(event) {
      const object = event.data.object as unknown as {
        id: string;
        payment_intent?: unknown;
        charge?: unknown;
      };
      const intentId = await intentOf(object);
      const order = intentId
        ? await db.order.findFirst({
            where: { OR: [{ paymentIntentId: intentId }, { payment: { providerId: intentId } }] },
            select: { id: true, status: true, shipments: { select: { id: true }, take: 1 } },
          })
        : null;
      if (!order) {
        logger.warn({ eventId: event.id, type: event.type }, "dispute or review for an order we do not know");
        return { outcome: "unknown-order", announced: false };
      }
      const orderId = order.id;
      const unshipped = order.shipments.length === 0;

      if (event.type.startsWith("charge.dispute.")) {
        const dispute = event.data.object as Stripe.Dispute;
        const detail = {
          dispute: dispute.id,
          event: event.type,
          status: dispute.status,
          amount: dispute.amount,
          currency: dispute.currency,
          reason: dispute.reason,
          evidenceDueBy: iso(dispute.evidence_details?.due_by),
          withdrawn: dispute.balance_transactions?.map((t) => ({ amount: t.amount, fee: t.fee })),
        };
        await deps.timeline.record(orderId, "dispute-updated", detail, `${dispute.id}:${event.type}`);
        await recordDispute(orderId, dispute, new Date(event.created * 1000));
        if (event.type === "charge.dispute.created") {
          const held = unshipped
            ? await deps.holds.placeHold(orderId, "dispute", { note: dispute.reason, by: "stripe" })
            : null;
          // Keyed by the dispute: its fields (the e-mails sent, the parcels) grow between deliveries.
          await deps.alerts.notify({
            key: `dispute-created-${dispute.id}`,
            title: held ? "Payment disputed: order held, no label" : "Payment disputed",
            fields: {
              orderId,
              dispute: dispute.id,
              amount: `${dispute.amount} ${dispute.currency}`,
              reason: dispute.reason,
              evidenceDueBy: detail.evidenceDueBy,
              ...(await evidenceOf(orderId)),
              action: "Answer the dispute in the Stripe Dashboard before the due date",
            },
          });
        }
        return { outcome: "processed", orderId, announced: false };
      }

      if (event.type === "review.opened") {
        const review = event.data.object as Stripe.Review;
        await deps.timeline.record(orderId, "radar-review", { review: review.id, open: true }, review.id);
        if (unshipped)
          await deps.holds.placeHold(orderId, "radar_review", { note: review.reason, by: "stripe" });
        return { outcome: "processed", orderId, announced: false };
      }
      if (event.type === "review.closed") {
        const review = event.data.object as Stripe.Review;
        await deps.timeline.record(
          orderId,
          "radar-review",
          { review: review.id, open: false, closedReason: review.closed_reason },
          `${review.id}:closed`,
        );
        if (review.closed_reason === "approved") {
          await deps.holds.releaseHold(orderId, { by: "stripe", onlyReason: "radar_review" });
        } else {
          await deps.alerts.notify({
            key: `radar-review-closed-${review.id}`,
            title: "Radar review closed without approval: order stays on hold",
            fields: {
              orderId,
              review: review.id,
              closedReason: review.closed_reason ?? "unknown",
              action: "Refund and cancel the order from the console",
            },
          });
        }
        return { outcome: "processed", orderId, announced: false };
      }
      // radar.early_fraud_warning.created
      const warning = event.data.object as Stripe.Radar.EarlyFraudWarning;
      await deps.timeline.record(
        orderId,
        "early-fraud-warning",
        { warning: warning.id, fraudType: warning.fraud_type, actionable: warning.actionable },
        warning.id,
      );
      const held = unshipped
        ? await deps.holds.placeHold(orderId, "radar_review", { note: warning.fraud_type, by: "stripe" })
        : null;
      await deps.alerts.notify({
        key: `early-fraud-warning-${warning.id}`,
        title: held ? "Early fraud warning: order held" : "Early fraud warning",
        fields: {
          orderId,
          warning: warning.id,
          fraudType: warning.fraud_type,
          action: "Refund and cancel the order from the console (a refund heads off the dispute)",
        },
      });
      return { outcome: "processed", orderId, announced: false };
    },
  };
}
