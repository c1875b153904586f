import {
  decideReturn,
  returnActionFrom,
  returnTransitions,
  type ReturnAction,
  type ReturnFacts,
} from "../shared/order-model";
import { AppError, isAppError } from "../errors";
import {
  returnApprovedEvent,
  returnCancelledEvent,
  returnReceivedEvent,
  returnRequestedEvent,
} from "../events/contracts";
import type { EventPublisher } from "../events/publisher";
import type { Timeline } from "../timeline/timeline";
import type { ReturnActor, ReturnCondition } from "./return-policy";
import type { ExchangeChargeStatus, ReturnRecords, ReturnRow, ReturnStatus } from "./return-records";

/** A return as both doors answer it (the admin API's JSON, the console's and the customer's pages). */
export interface ReturnView {
  returnId: string;
  orderId: string;
  status: ReturnStatus;
  reason: string;
  note: string | null;
  requestedBy: string;
  lines: ReturnRow["lines"];
  /** Lines with an exchangeSku: the new items' shipment. */
  exchange: {
    trackingNumber: string | null;
    trackingUrl: string | null;
    reservedAt: string | null;
    sentAt: string | null;
    /** The exchange parcel's tracker: its latest status, and when it was delivered. */
    trackerStatus: string | null;
    deliveredAt: string | null;
    /** A dearer exchange's off-session charge of the difference; null when none is owed or asked yet. */
    charge: {
      amount: number | null;
      status: ExchangeChargeStatus;
      paymentIntentId: string | null;
      error: string | null;
      chargedAt: string | null;
    } | null;
  } | null;
  label: {
    carrier: string | null;
    trackingNumber: string;
    trackingUrl: string | null;
    labelUrl: string | null;
    trackerStatus: string | null;
    refundStatus: string | null;
    sentAt: string | null;
  } | null;
  condition: ReturnCondition | null;
  receivedAt: string | null;
  refundAmount: number | null;
  refundedAt: string | null;
  restockedAt: string | null;
  writtenOffAt: string | null;
  closedAt: string | null;
}

const iso = (value: Date | null) => (value ? value.toISOString() : null);

export function toReturnView(row: ReturnRow): ReturnView {
  return {
    returnId: row.id,
    orderId: row.order_id,
    status: row.status,
    reason: row.reason,
    note: row.note,
    requestedBy: row.requested_by,
    lines: row.lines,
    exchange: row.lines.some((line) => line.exchangeSku)
      ? {
          trackingNumber: row.exchange_tracking_number,
          trackingUrl: row.exchange_tracking_url,
          reservedAt: iso(row.exchange_reserved_at),
          sentAt: iso(row.exchange_sent_at),
          trackerStatus: row.exchange_tracker_status,
          deliveredAt: iso(row.exchange_delivered_at),
          charge: row.exchange_charge_status
            ? {
                amount: row.exchange_charge_amount,
                status: row.exchange_charge_status,
                paymentIntentId: row.exchange_charge_intent_id,
                error: row.exchange_charge_error,
                chargedAt: iso(row.exchange_charged_at),
              }
            : null,
        }
      : null,
    label: row.label_tracking_number
      ? {
          carrier: row.label_carrier,
          trackingNumber: row.label_tracking_number,
          trackingUrl: row.label_tracking_url,
          labelUrl: row.label_url,
          trackerStatus: row.label_tracker_status,
          refundStatus: row.label_refund_status,
          sentAt: iso(row.label_sent_at),
        }
      : null,
    condition: row.condition,
    receivedAt: iso(row.received_at),
    refundAmount: row.refund_amount,
    refundedAt: iso(row.refunded_at),
    restockedAt: iso(row.restocked_at),
    writtenOffAt: iso(row.written_off_at),
    closedAt: iso(row.closed_at),
  };
}

export interface ReturnRequest {
  orderId: string;
  lines: { sku: string; quantity: number; exchangeSku?: string | undefined }[];
  reason: string;
  note?: string | undefined;
  by: ReturnActor;
}

export interface ReturnDecision {
  returnId: string;
  by: ReturnActor;
  note?: string | undefined;
}

/**
 * What people do to returns, one use case each, shared by the admin API (admin-routes.ts), the ops
 * console and the customer's page (src/pages): each checks the rules, moves the return in one
 * conditional write, writes its timeline entry and tells the process-return run by an event whose
 * id is the return's (Inngest drops a repeat), and refuses with an AppError changing nothing.
 */
export interface ReturnActions {
  request(request: ReturnRequest): Promise<ReturnView>;
  approve(decision: ReturnDecision): Promise<ReturnView>;
  reject(decision: ReturnDecision): Promise<ReturnView>;
  /** The parcel is back: by ops (with the goods' condition) or the carrier's tracker (resellable). */
  receive(decision: ReturnDecision & { condition: ReturnCondition }): Promise<ReturnView>;
  /**
   * Ends a return whose parcel is not coming (its unused label is handed back), or one whose
   * exchange the bank refused to pay the difference for (received, waiting for ops).
   */
  close(decision: ReturnDecision): Promise<ReturnView>;
  list(orderId: string): Promise<ReturnView[]>;
  /** Returns still open across orders, oldest first (at most `limit`). */
  listOpen(limit?: number): Promise<ReturnView[]>;
  get(returnId: string): Promise<ReturnView>;
}

export interface ReturnActionsDeps {
  records: ReturnRecords;
  publisher: EventPublisher;
  timeline: Pick<Timeline, "record">;
  /** RETURN_WINDOW in milliseconds. */
  windowMs: number;
  /** RETURN_APPROVAL: "ops" holds a customer's request until ops approve it. */
  approval: "auto" | "ops";
  now?: () => number;
  /** The order's returns, newest first (a query, src/returns/return-queries.ts). */
  listForOrder(orderId: string): Promise<ReturnRow[]>;
}

/** The return, or a 404 refusal. */
async function loadReturn(records: Pick<ReturnRecords, "get">, returnId: string): Promise<ReturnRow> {
  const found = await records.get(returnId);
  if (!found) throw new AppError("return_not_found", `Return ${returnId} does not exist`);
  return found;
}

/** What the return model reads of a return. */
const factsOf = (row: ReturnRow): ReturnFacts => ({
  status: row.status,
  refunded: row.refunded_at !== null,
  exchangeChargeStatus: row.exchange_charge_status,
});

/** The return model's refusal of `action` on the return as it is (`row`), as the error answered. */
const refuse = (row: ReturnRow, action: ReturnAction): never => {
  const verdict = decideReturn(action, factsOf(row));
  throw new AppError(
    "return_not_actionable",
    verdict.allowed ? `Return ${row.id} changed meanwhile: ask again` : `Return ${row.id}: ${verdict.why}`,
    { details: { status: row.status } },
  );
};

/**
 * The return model first (decision 0170): refused on the return as read, the answer is its
 * reason; allowed, the statuses it may move from, for the conditional write that is the fence.
 */
const allowedFrom = (row: ReturnRow, action: ReturnAction): ReturnStatus[] => {
  if (!decideReturn(action, factsOf(row)).allowed) return refuse(row, action);
  return [...returnActionFrom(action, factsOf(row))];
};

export function createReturnActions(deps: ReturnActionsDeps): ReturnActions {
  const { records, publisher, timeline } = deps;
  const now = deps.now ?? Date.now;
  const load = (returnId: string) => loadReturn(records, returnId);

  return {
    async request(request) {
      if (request.lines.length === 0)
        throw new AppError("return_line_invalid", "Pick at least one line to return");
      const approved = request.by !== "customer" || deps.approval === "auto";
      const row = await records.create({
        orderId: request.orderId,
        lines: request.lines,
        reason: request.reason,
        note: request.note,
        requestedBy: request.by,
        approved,
        windowMs: deps.windowMs,
        now: new Date(now()),
      });
      try {
        await publisher.publish(returnRequestedEvent({ returnId: row.id, orderId: row.order_id }));
      } catch (error) {
        // No run will handle it: it is cancelled rather than left waiting, and the request can be made again.
        await records.transition(row.id, [...returnTransitions.cancel.from], "cancelled", {
          note: "could not be started",
        });
        throw new AppError("upstream_unavailable", "The return could not be started; please try again", {
          cause: error,
        });
      }
      return toReturnView(row);
    },

    async approve(decision) {
      const row = await load(decision.returnId);
      const moved = await records.transition(row.id, allowedFrom(row, "approve"), "approved", decision);
      if (!moved) return refuse(await load(row.id), "approve");
      await timeline.record(row.order_id, "return-approved", { returnId: row.id, by: decision.by });
      await publisher.publish(returnApprovedEvent({ returnId: row.id, orderId: row.order_id }));
      return toReturnView(moved);
    },

    async reject(decision) {
      const row = await load(decision.returnId);
      // Once refunded, the money is back with the customer: nothing left to reject (the model's rule).
      const moved = await records.transition(row.id, allowedFrom(row, "reject"), "rejected", decision);
      if (!moved) return refuse(await load(row.id), "reject");
      await timeline.record(row.order_id, "return-rejected", {
        returnId: row.id,
        by: decision.by,
        note: decision.note ?? null,
      });
      await publisher.publish(
        returnCancelledEvent({
          returnId: row.id,
          orderId: row.order_id,
          reason: decision.note ?? "rejected",
        }),
      );
      return toReturnView(moved);
    },

    async receive(decision) {
      const row = await load(decision.returnId);
      // The return model first; a repeat it refuses (the carrier's, already received) is answered below.
      const moved = decideReturn("receive", factsOf(row)).allowed
        ? await records.transition(row.id, [...returnActionFrom("receive", factsOf(row))], "received", {
            ...decision,
            // Written by the move's own statement: shop/return.received.v1 comes from this entry.
            entry: {
              kind: "return-received",
              detail: { returnId: row.id, by: decision.by, condition: decision.condition },
            },
          })
        : null;
      if (!moved) {
        // Read again: the row read above may predate a copy of the same event that landed at
        // once (EasyPost delivers an event several times, sometimes together); the answer is
        // what the return is now, so every copy is acknowledged alike.
        const current = await load(row.id);
        // The carrier repeating its delivery (or the run asking after a crash) publishes the
        // same event again: Inngest drops the repeat, and nothing else changes. Already past
        // received (refunded, closed): acknowledged, nothing to do.
        if (decision.by === "carrier" && current.received_at !== null) {
          if (current.status === "received") {
            await publisher.publish(
              returnReceivedEvent({
                returnId: current.id,
                orderId: current.order_id,
                condition: current.condition ?? "resellable",
              }),
            );
          }
          return toReturnView(current);
        }
        return refuse(current, "receive");
      }
      await publisher.publish(
        returnReceivedEvent({ returnId: row.id, orderId: row.order_id, condition: decision.condition }),
      );
      return toReturnView(moved);
    },

    async close(decision) {
      const row = await load(decision.returnId);
      // A refused exchange charge stopped the run: the return is ops' to end, even received (the model's rule).
      const moved = await records.transition(row.id, allowedFrom(row, "close"), "closed", decision);
      if (!moved) return refuse(await load(row.id), "close");
      await timeline.record(row.order_id, "return-closed", {
        returnId: row.id,
        by: decision.by,
        note: decision.note ?? null,
      });
      await publisher.publish(
        returnCancelledEvent({ returnId: row.id, orderId: row.order_id, reason: decision.note ?? "closed" }),
      );
      return toReturnView(moved);
    },

    async list(orderId) {
      return (await deps.listForOrder(orderId)).map(toReturnView);
    },

    async listOpen(limit = 100) {
      return (await records.listOpen(Math.min(Math.max(limit, 1), 500))).map(toReturnView);
    },

    async get(returnId) {
      return toReturnView(await load(returnId));
    },
  };
}

/** True for the refusals a customer can act on (shown on the page, not logged as failures). */
export function isReturnRefusal(error: unknown): error is AppError {
  return (
    isAppError(error) &&
    [
      "order_not_returnable",
      "return_window_closed",
      "return_line_invalid",
      "return_quantity_exceeded",
      "validation_failed",
      "exchange_needs_saved_card",
    ].includes(error.code)
  );
}
