import type Stripe from "stripe";
import { refundedOfCaptured } from "../payments/payment-gateway";
import { decide, refundLanding } from "../shared/order-model";
import { loadOrderFacts, refusal } from "./model-check";
import type { Alerter } from "../alerts";
import type { Database, Prisma } from "../db/client";
import { AppError, isAppError } from "../errors";
import type { Logger } from "../logger";
import type { EmailSender } from "../notifications/email-sender";
import { emailTemplates, toOrderSummary } from "../notifications/templates";
import { recordInTransaction } from "../timeline/in-transaction";
import type { Actor } from "./actor";
import { disputedRefundAlertKey, disputeHoldOf, disputeWithholds } from "./disputed-amount";

export interface RefundRequest {
  orderId: string;
  /** Minor units; unset refunds everything captured and not yet refunded. */
  amount?: number;
  reason?: string;
  /** Who asked: a person through a door, or the return workflow (src/returns). */
  by: Actor | "process-return";
  /**
   * The caller's own id for this refund (a return's id, src/returns): the refund row gets it, so
   * its Stripe key is `refund-<id>` and asking again with it returns the one refund made.
   */
  refundId?: string;
  /** False: a full refund does not hand the outbound label back (the parcel was delivered and returned). */
  handBackLabel?: boolean;
  /**
   * True (a return's refund): when Stripe refuses because the money is already back (a Dashboard
   * refund whose webhook has not come), the payment's refunded total is brought up to Stripe's
   * before the refusal is answered, since the caller settles on it. Unset (ops): a refused
   * request writes nothing (decision 0170).
   */
  catchUpOnRefusal?: boolean;
}

export interface RefundOutcome {
  refundId: string;
  orderId: string;
  amount: number;
  currency: string;
  status: "succeeded";
  providerId: string;
  /** Captured, refunded so far (this refund included) and what is left to refund. */
  captured: number;
  refunded: number;
  refundable: number;
}

export interface RefundOrderDeps {
  db: Database;
  stripe: Stripe;
  sender: EmailSender;
  logger: Logger;
  /**
   * Called once all that was captured is refunded: a bought label not yet scanned is handed back
   * to the carrier (src/shipping/label-void.ts), a scanned one goes to ops.
   */
  onFullRefund?: (orderId: string) => Promise<void>;
  /** Told once per dispute when a refund is refused because the charge is disputed. */
  alerts?: Pick<Alerter, "notify">;
}

interface PendingRefund {
  id: string;
  amount: number;
  currency: string;
  reason: string | null;
  /** Who asked; unknown for a request a crash left pending (settled by the next one). */
  by?: string;
  /** The request's catchUpOnRefusal; a pending row settled by a later request has none. */
  catchUpOnRefusal?: boolean;
}

/**
 * Refund, from the admin API or the console: part or all of what was captured, through Stripe.
 *
 * 1. Under a lock on the order's payment row, the request is checked against what is still
 *    refundable (captured minus every refund not failed, pending ones included, so two concurrent
 *    requests cannot together exceed the capture) and recorded as a `pending` refund row.
 * 2. Stripe is asked with the row's id as the idempotency key (`refund-<id>`): a retried call,
 *    after a lost answer or a crash, returns the same refund instead of a second one.
 * 3. The outcome is recorded on the refund, the payment (amount_refunded, `refunded` once all is
 *    returned) and the timeline, and the customer gets one e-mail per refund (key `refund-<id>`).
 *
 * A refund left pending by a crash or an outage is settled (with its own key) by the next refund
 * request for the order before anything new is asked.
 */
export function createRefunds(deps: RefundOrderDeps) {
  const { db, stripe, sender } = deps;
  const logger = deps.logger.child({ component: "refunds" });

  async function totals(orderId: string) {
    const payment = await db.payment.findUnique({ where: { orderId } });
    const refunds = await db.refund.findMany({ where: { orderId, status: { not: "failed" } } });
    // As recordRequest counts under the lock: a compensation's refund is on the payment row only.
    const committed = Math.max(
      refunds.reduce((sum, refund) => sum + refund.amount, 0),
      payment?.amountRefunded ?? 0,
    );
    const captured = payment?.amountCaptured ?? 0;
    return { payment, captured, committed, refundable: Math.max(captured - committed, 0) };
  }

  async function recordRequest(request: RefundRequest): Promise<PendingRefund> {
    const { orderId } = request;
    return db.$transaction(async (tx) => {
      // The payment row is the lock: concurrent requests for one order take turns here.
      const locked = await tx.$queryRaw<
        { amount_captured: number; amount_refunded: number; currency: string }[]
      >`
        SELECT amount_captured, amount_refunded, currency FROM payments WHERE order_id = ${orderId}::uuid FOR UPDATE`;
      const payment = locked[0];
      if (!payment || payment.amount_captured <= 0) {
        throw new AppError("order_not_refundable", `Order ${orderId} has no captured payment to refund`);
      }
      const committed = await tx.refund.aggregate({
        where: { orderId, status: { not: "failed" } },
        _sum: { amount: true },
      });
      // A refund made by the workflow's compensation is on the payment row only.
      const refunded = Math.max(committed._sum.amount ?? 0, payment.amount_refunded);
      const refundable = payment.amount_captured - refunded;
      const amount = request.amount ?? refundable;
      if (refundable <= 0 || amount > refundable) {
        throw new AppError(
          "refund_exceeds_captured",
          refundable <= 0
            ? `Order ${orderId} has already been refunded in full (${refunded} of ${payment.amount_captured} minor units)`
            : `A refund of ${amount} minor units (cents) exceeds what is left to refund on order ${orderId}: ${refundable} (captured ${payment.amount_captured}, refunded ${refunded})`,
          { details: { requested: amount, captured: payment.amount_captured, refunded, refundable } },
        );
      }
      // A chargeback holds its amount: that money goes back to the cardholder through the
      // dispute, and a refund on top would pay them twice (src/orders/disputed-amount.ts).
      const held = await disputeHoldOf(tx, orderId);
      if (disputeWithholds(held, refundable, amount)) {
        const disputes = held.disputes.map((d) => d.providerId);
        throw new AppError(
          "charge_disputed",
          `Order ${orderId}'s payment is disputed (${disputes.join(", ")}): ${held.amount} of it is with the card network, so a refund of ${amount} is refused. Answer or accept the dispute in the Stripe Dashboard instead`,
          {
            details: {
              requested: amount,
              refundable: Math.max(refundable - held.amount, 0),
              disputed: held.amount,
              disputes,
            },
          },
        );
      }
      const currency = payment.currency.trim();
      const row = await tx.refund.create({
        data: {
          ...(request.refundId ? { id: request.refundId } : {}),
          orderId,
          amount,
          currency,
          reason: request.reason ?? null,
        },
      });
      return {
        id: row.id,
        amount,
        currency,
        reason: row.reason,
        by: request.by,
        catchUpOnRefusal: request.catchUpOnRefusal,
      };
    });
  }

  /** Asks Stripe for the refund under its own idempotency key and records the outcome. */
  async function settle(orderId: string, paymentIntentId: string, refund: PendingRefund): Promise<string> {
    let providerId: string;
    try {
      const created = await stripe.refunds.create(
        {
          payment_intent: paymentIntentId,
          amount: refund.amount,
          metadata: {
            orderId,
            refundRequestId: refund.id,
            // Stripe's webhook echoes it: a request that dies after this call is recorded as
            // its asker's all the same, by the webhook (recordLanded).
            ...(refund.by ? { requestedBy: refund.by.slice(0, 500) } : {}),
            ...(refund.reason ? { reason: refund.reason.slice(0, 500) } : {}),
          },
        },
        { idempotencyKey: `refund-${refund.id}` },
      );
      providerId = created.id;
    } catch (error) {
      const stripeError = error as { type?: string; code?: string; message?: string };
      if (stripeError.type === "StripeInvalidRequestError" || stripeError.type === "StripeCardError") {
        if (stripeError.code === "charge_disputed") {
          // Refused because the charge is disputed: the failed row is the answer a retry under the
          // same id gets without asking Stripe again (issue 38), its request and refusal recorded.
          await db.$transaction(async (tx) => {
            await tx.refund.update({
              where: { id: refund.id },
              data: { status: "failed", error: `charge_disputed: ${stripeError.message ?? "refused"}` },
            });
            await recordInTransaction(tx, orderId, "refund-requested", {
              refundId: refund.id,
              amount: refund.amount,
              reason: refund.reason,
              by: refund.by ?? "unknown",
            });
            await recordInTransaction(tx, orderId, "refund-failed", {
              refundId: refund.id,
              error: stripeError.message ?? null,
            });
          });
        } else {
          // Refused for good otherwise (already refunded at the Dashboard, say): a refused request
          // writes nothing (decision 0170), so its pending row goes; asked again under the same
          // id, Stripe gives the same answer for the same key.
          await db.refund.deleteMany({ where: { id: refund.id, status: "pending" } });
          logger.warn(
            { orderId, refundId: refund.id, error: stripeError.message },
            "refund refused by Stripe",
          );
        }
        if (stripeError.code && alreadyBackCodes.includes(stripeError.code)) {
          // The money is already back at Stripe (the Dashboard, its webhook not yet here). A
          // return settles on this answer, so its records first catch up with Stripe's total.
          const atStripe = await refundedAtStripe(orderId, paymentIntentId);
          const landed = refund.catchUpOnRefusal ? await catchUpWithStripe(orderId, atStripe) : null;
          throw new AppError(
            "order_not_refundable",
            `Stripe refused the refund: the payment is already refunded at Stripe (${stripeError.message ?? stripeError.code})`,
            {
              cause: error,
              details: {
                requested: refund.amount,
                refusedByStripe: stripeError.code,
                refundedAtStripe: atStripe,
                ...(landed ? { captured: landed.captured, refunded: landed.refunded } : {}),
              },
            },
          );
        }
        if (stripeError.code === "charge_disputed") {
          throw new AppError("charge_disputed", `Stripe refused the refund: ${stripeError.message ?? ""}`, {
            cause: error,
            details: { requested: refund.amount, disputes: [] as string[], paymentIntentId },
          });
        }
        throw new AppError(
          "order_not_refundable",
          `Stripe refused the refund: ${stripeError.message ?? "unknown"}`,
          {
            cause: error,
          },
        );
      }
      // Unknown outcome (network, 5xx): left pending, retried with the same key next time.
      throw new AppError("upstream_unavailable", "The payment provider is unavailable; please try again", {
        cause: error,
      });
    }
    // The fence after the effect: a cancel's cleanup may have refunded "what is left" while this
    // refund was in flight, so the record asks Stripe's own total and the model (refundLanding).
    const atStripe = await refundedAtStripe(orderId, paymentIntentId);
    await recordIssued(orderId, refund, providerId, atStripe);
    return providerId;
  }

  /**
   * A refund Stripe made, recorded once on its row, the payment and the timeline, and the customer
   * told: by the request that asked, or by Stripe's webhook when the request died after Stripe's
   * answer (whichever comes first under the payment row's lock; the other finds it recorded).
   * False when it was recorded already.
   */
  async function recordIssued(
    orderId: string,
    refund: PendingRefund,
    providerId: string,
    atStripe: number | null,
  ): Promise<boolean> {
    const over = await db.$transaction(async (tx) => {
      // The payment row's lock orders this write with recordRequest and with other settles.
      const locked = await tx.$queryRaw<{ amount_captured: number; amount_refunded: number }[]>`
        SELECT amount_captured, amount_refunded FROM payments WHERE order_id = ${orderId}::uuid FOR UPDATE`;
      const updated = await tx.refund.updateMany({
        where: { id: refund.id, status: "pending" },
        data: { status: "succeeded", providerId },
      });
      // Stripe's refund webhook comes as soon as the refund exists, often before this call's
      // answer: it records the row through recordLanded (then this finds it recorded), or, from an
      // intake without it, settles the row bare and leaves it to this to record, once. The payment
      // row's lock above makes the timeline check and its entries one turn.
      if (updated.count === 0 && !(await settledByWebhookOnly(tx, orderId, refund.id, providerId))) {
        return false;
      }
      // Requested and issued land together: the timeline shows no request Stripe refused.
      await recordInTransaction(tx, orderId, "refund-requested", {
        refundId: refund.id,
        amount: refund.amount,
        reason: refund.reason,
        by: refund.by ?? "unknown",
      });
      const sum = await tx.refund.aggregate({
        where: { orderId, status: "succeeded" },
        _sum: { amount: true },
      });
      const captured = locked[0]?.amount_captured ?? 0;
      const { refunded, over } = refundLanding({
        captured,
        succeededRows: sum._sum.amount ?? 0,
        recorded: locked[0]?.amount_refunded ?? 0,
        atStripe,
      });
      await tx.payment.update({
        where: { orderId },
        data: {
          amountRefunded: refunded,
          ...(refunded >= captured ? { status: "refunded" as const } : {}),
        },
      });
      await recordInTransaction(tx, orderId, "refund-issued", {
        refundId: refund.id,
        stripeRefund: providerId,
        amount: refund.amount,
        refunded,
      });
      if (over === 0) return null;
      // Recorded, not dropped: the payment row cannot hold more than the capture, the timeline can.
      await recordInTransaction(tx, orderId, "refund-over-captured", {
        refundId: refund.id,
        stripeRefund: providerId,
        amount: refund.amount,
        captured,
        over,
      });
      return { captured, over };
    });
    if (over === false) return false;
    if (over) await tellOverRefunded(orderId, refund, providerId, over);
    await notify(orderId, refund);
    logger.info({ orderId, refundId: refund.id, amount: refund.amount, providerId }, "refund issued");
    return true;
  }

  /**
   * The payment row brought up to what Stripe says is refunded (never lowered, never past the
   * capture: refundLanding), under the payment row's lock; the charge.refunded webhook, when it
   * comes, records the Dashboard's refund rows themselves.
   */
  async function catchUpWithStripe(
    orderId: string,
    atStripe: number | null,
  ): Promise<{ captured: number; refunded: number }> {
    return db.$transaction(async (tx) => {
      const locked = await tx.$queryRaw<{ amount_captured: number; amount_refunded: number }[]>`
        SELECT amount_captured, amount_refunded FROM payments WHERE order_id = ${orderId}::uuid FOR UPDATE`;
      const captured = locked[0]?.amount_captured ?? 0;
      const recorded = locked[0]?.amount_refunded ?? 0;
      const sum = await tx.refund.aggregate({
        where: { orderId, status: "succeeded" },
        _sum: { amount: true },
      });
      const { refunded } = refundLanding({
        captured,
        succeededRows: sum._sum.amount ?? 0,
        recorded,
        atStripe,
      });
      if (locked[0] && refunded > recorded) {
        await tx.payment.update({
          where: { orderId },
          data: {
            amountRefunded: refunded,
            ...(refunded >= captured ? { status: "refunded" as const } : {}),
          },
        });
      }
      return { captured, refunded };
    });
  }

  /** Stripe's own total refunded of the capture; null (the records decide) if it cannot be read. */
  async function refundedAtStripe(orderId: string, paymentIntentId: string): Promise<number | null> {
    try {
      const intent = await stripe.paymentIntents.retrieve(paymentIntentId, { expand: ["latest_charge"] });
      const charge = intent.latest_charge;
      return charge && typeof charge === "object" ? refundedOfCaptured(charge) : null;
    } catch (error) {
      logger.warn({ err: error, orderId }, "refund recorded without Stripe's total");
      return null;
    }
  }

  /** Ops hear once per order: money refunded beyond the capture cannot be taken back at Stripe. */
  async function tellOverRefunded(
    orderId: string,
    refund: PendingRefund,
    providerId: string,
    over: { captured: number; over: number },
  ): Promise<void> {
    logger.error({ orderId, refundId: refund.id, ...over }, "refunded beyond the capture");
    await deps.alerts?.notify({
      key: overRefundAlertKey(orderId),
      title: "Refunded more than was captured",
      fields: {
        orderId,
        refund: `${refund.id} (${providerId})`,
        captured: over.captured,
        over: over.over,
        action:
          "A refund cannot be undone at Stripe: recover the amount over the capture from the customer, or write it off",
      },
    });
  }

  async function notify(orderId: string, refund: PendingRefund): Promise<void> {
    const order = await db.order.findUniqueOrThrow({
      where: { id: orderId },
      include: { lines: { orderBy: { sku: "asc" } }, payment: true },
    });
    const full = (order.payment?.amountRefunded ?? 0) >= (order.payment?.amountCaptured ?? 0);
    try {
      await sender.send({
        idempotencyKey: `refund-${refund.id}`,
        orderId,
        template: "refunded",
        to: order.email,
        content: emailTemplates.refunded({ order: toOrderSummary(order), amount: refund.amount, full }),
      });
    } catch (error) {
      // The money is returned and recorded; a mail outage must not turn that into an error answer.
      logger.error({ err: error, orderId, refundId: refund.id }, "refund e-mail not sent");
    }
  }

  /**
   * Ops hear once per dispute (whoever asked, however often) that refunds of the order wait for
   * it; a refusal Stripe gave before the dispute's webhook reached us is keyed by the payment.
   */
  async function tellDisputed(request: RefundRequest, error: AppError): Promise<void> {
    const details = error.details as { disputes?: string[]; disputed?: number; paymentIntentId?: string };
    const about = details.disputes?.[0] ?? details.paymentIntentId ?? request.orderId;
    await deps.alerts?.notify({
      key: disputedRefundAlertKey(about),
      title: "Refund refused: the payment is disputed",
      fields: {
        orderId: request.orderId,
        dispute: details.disputes?.join(", ") || "not yet recorded",
        disputed: details.disputed,
        requestedBy: request.by === "process-return" ? `return ${request.refundId ?? ""}` : request.by,
        action:
          "Refund nothing outside the dispute: accept it in the Stripe Dashboard to give the money back, or answer it with the order's evidence; settle any return with the customer once it is decided",
      },
    });
  }

  /**
   * The order model first (decision 0170): nothing captured, or all of it refunded, is refused
   * with its reason; recordRequest's check under the payment row's lock is the fence after it.
   */
  async function askModel(request: RefundRequest): Promise<RefundRequest> {
    const facts = await loadOrderFacts(db, request.orderId);
    if (!facts) throw new AppError("order_not_found", `Order ${request.orderId} does not exist`);
    const verdict = decide("refund", facts);
    if (verdict.allowed) return request;
    throw refusal(request.orderId, "refund", verdict, {
      details: {
        requested: request.amount ?? 0,
        captured: facts.captured,
        refunded: facts.refunded,
        refundable: Math.max(facts.captured - facts.refunded, 0),
      },
    });
  }

  async function refundOnce(request: RefundRequest): Promise<RefundOutcome> {
    const { orderId } = request;
    const order = await db.order.findUnique({ where: { id: orderId }, select: { paymentIntentId: true } });
    if (!order) throw new AppError("order_not_found", `Order ${orderId} does not exist`);
    if (!order.paymentIntentId) {
      throw new AppError("order_not_refundable", `Order ${orderId} has no payment to refund`);
    }
    // Settle what an earlier request left pending first (it counts against the capture anyway).
    const pending = await db.refund.findMany({
      where: { orderId, status: "pending" },
      orderBy: { createdAt: "asc" },
    });
    for (const earlier of pending) await settle(orderId, order.paymentIntentId, earlier);

    // Asked before under the caller's id: the refund made then (settled just above if it was
    // left pending) is the answer, never a second one.
    const earlier = request.refundId ? await db.refund.findUnique({ where: { id: request.refundId } }) : null;
    if (earlier && earlier.orderId !== orderId) {
      throw new AppError("conflict", `Refund ${earlier.id} belongs to another order`);
    }
    if (earlier?.status === "failed" && earlier.error?.startsWith("charge_disputed")) {
      throw new AppError("charge_disputed", `Refund ${earlier.id} was refused: ${earlier.error}`, {
        details: {
          requested: earlier.amount,
          disputes: [] as string[],
          paymentIntentId: order.paymentIntentId,
        },
      });
    }
    if (earlier?.status === "failed") {
      throw new AppError("order_not_refundable", `Refund ${earlier.id} was refused: ${earlier.error ?? ""}`);
    }
    const refund = earlier
      ? {
          id: earlier.id,
          amount: earlier.amount,
          currency: earlier.currency,
          reason: earlier.reason,
          by: request.by,
          catchUpOnRefusal: request.catchUpOnRefusal,
        }
      : await recordRequest(await askModel(request));
    const providerId = earlier?.providerId ?? (await settle(orderId, order.paymentIntentId, refund));
    const after = await totals(orderId);
    if (after.refundable === 0 && deps.onFullRefund && request.handBackLabel !== false) {
      try {
        await deps.onFullRefund(orderId);
      } catch (error) {
        // The money is back and recorded; the label is for ops to chase if the carrier is down.
        logger.error({ err: error, orderId }, "label not handed back after a full refund");
      }
    }
    return {
      refundId: refund.id,
      orderId,
      amount: refund.amount,
      currency: refund.currency,
      status: "succeeded",
      providerId,
      captured: after.captured,
      refunded: after.payment?.amountRefunded ?? 0,
      refundable: after.refundable,
    };
  }

  return {
    /**
     * Stripe's webhook says our request's refund succeeded: recorded as the request would have
     * (its asker from the refund's metadata), once. A request that died between Stripe's answer and
     * its record leaves nobody else to do it. False when the row is not this order's request or
     * was recorded already.
     */
    async recordLanded(landed: {
      orderId: string;
      requestId: string;
      providerId: string;
      by?: string | undefined;
      atStripe: number | null;
    }): Promise<boolean> {
      const row = await db.refund.findFirst({ where: { id: landed.requestId, orderId: landed.orderId } });
      // A row Stripe or a request marked failed is left as it is: recordIssued moves only a pending
      // row, or records one the webhook settled bare.
      if (!row) return false;
      const refund: PendingRefund = {
        id: row.id,
        amount: row.amount,
        currency: row.currency,
        reason: row.reason,
        by: landed.by ?? "unknown",
      };
      return recordIssued(landed.orderId, refund, landed.providerId, landed.atStripe);
    },

    async refund(request: RefundRequest): Promise<RefundOutcome> {
      try {
        return await refundOnce(request);
      } catch (error) {
        if (isAppError(error) && error.code === "charge_disputed") {
          logger.warn(
            { orderId: request.orderId, by: request.by },
            "refund refused: the payment is disputed",
          );
          await tellDisputed(request, error);
        }
        throw error;
      }
    },
  };
}

/**
 * Stripe's refusals because the money is already back: `charge_already_refunded` (all of it) and
 * `amount_too_large` (more than is left), both 400 invalid_request_error.
 */
export const alreadyBackCodes: readonly string[] = ["charge_already_refunded", "amount_too_large"];

/** One alert per order for money refunded beyond its capture. */
export const overRefundAlertKey = (orderId: string) => `refund-over-captured-${orderId}`;

export type Refunds = ReturnType<typeof createRefunds>;

/**
 * True when Stripe's webhook marked this request's row succeeded (with this Stripe refund) before
 * the request recorded it: its intake settles a row of ours without a timeline entry, leaving the
 * request and its outcome to the request. False once they are on the timeline (a second settle).
 */
async function settledByWebhookOnly(
  tx: Prisma.TransactionClient,
  orderId: string,
  refundId: string,
  providerId: string,
): Promise<boolean> {
  const row = await tx.refund.findUnique({
    where: { id: refundId },
    select: { status: true, providerId: true },
  });
  if (row?.status !== "succeeded" || row.providerId !== providerId) return false;
  const recorded = await tx.orderTimelineEntry.count({
    where: { orderId, kind: "refund-issued", detail: { path: ["refundId"], equals: refundId } },
  });
  return recorded === 0;
}
