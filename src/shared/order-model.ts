import type { ErrorCode } from "../errors";
import type { OrderStatus } from "../generated/prisma/enums";

/**
 * The state model of orders, parcels and returns (decision 0170): what each may do next,
 * declared once. The admin API's use cases, the ops console (which offers only what is allowed
 * and says why the rest is not), the customer pages and the workflow's guarded writes ask it. The
 * guards that must be one SQL statement under the order's row lock take their lists from here,
 * and test/orders/order-model.test.ts runs every combination of facts through both the model and
 * the real statements, so they cannot drift apart. docs/order-model.md is rendered from it
 * (`npm run docs:model`; a test checks it is current).
 *
 * A typed table of our own, not XState: an order's state is a row (its status plus a few facts: a
 * cancel asked, a hold, labels bought and scanned, a run failed, a purchase in flight) changed by
 * many processes under row locks, never one in-memory actor; what every caller needs is "may this
 * happen on these facts, and if not, why", asked from code next to SQL, and a table to render.
 */

export const orderStatuses = [
  "pending",
  "payment_processing",
  "authorized",
  "paid",
  "payment_failed",
  "expired",
  "fulfilling",
  "shipped",
  "delivered",
  "completed",
  "cancelled",
  "cancelled_out_of_stock",
] as const satisfies readonly OrderStatus[];

/** Paid (or authorized) and not yet booked: the fulfilment run may still move it forward. */
export const inFulfilmentStatuses = [
  "authorized",
  "paid",
  "fulfilling",
] as const satisfies readonly OrderStatus[];
/** A label was bought and recorded: the parcel is (or was) with the carrier. */
export const bookedStatuses = ["shipped", "delivered", "completed"] as const satisfies readonly OrderStatus[];
/** Not paid yet: nothing to stop, the checkout expires on its own. */
export const unpaidStatuses = ["pending", "payment_processing"] as const satisfies readonly OrderStatus[];
/** Cancel: before the label, or shipped while every label can still be handed back. */
export const cancellableStatuses = [
  ...inFulfilmentStatuses,
  "shipped",
] as const satisfies readonly OrderStatus[];
/** Hold: paid, no label yet. */
export const holdableStatuses = inFulfilmentStatuses;
/** Re-drive after the booking: a run that failed on a booked order resumes from the record. */
export const redrivableBookedStatuses = ["shipped", "delivered"] as const satisfies readonly OrderStatus[];

/** The customer's own pages (src/pages/customer): what they offer in which status. */
export const customerRules = {
  "ask for a return": {
    statuses: ["delivered", "completed"],
    requires: "inside RETURN_WINDOW, lines not returned yet",
  },
  "review the order": { statuses: bookedStatuses, requires: "not reviewed yet" },
  "stop polling the status": {
    statuses: ["delivered", "completed", "payment_failed", "expired", "cancelled", "cancelled_out_of_stock"],
    requires: "nothing more happens to the order by itself",
  },
} as const satisfies Record<string, { statuses: readonly OrderStatus[]; requires: string }>;

/** Tracker statuses of a label the carrier has not scanned yet (EasyPost's "label created"). */
export const unscannedTrackerStatuses = ["unknown", "pre_transit"] as const;

/** One current parcel's label, as the model reads it. */
export interface LabelFacts {
  status: "booked" | "delivered";
  trackerStatus: string | null;
  labelRefundStatus: string | null;
}

/** What the model needs to know of an order: read from its row, parcels and timeline. */
export interface OrderFacts {
  status: OrderStatus;
  cancelRequested: boolean;
  /** The hold's reason, or null. */
  holdReason: string | null;
  /** Current parcels' labels (a re-shipped parcel by its latest label). */
  labels: readonly LabelFacts[];
  /** The fulfilment run failed since the order was last re-driven. */
  runFailed: boolean;
  /** create-shipment is buying the label now (its mark is set and fresh). */
  labelPurchaseInFlight: boolean;
  /** Minor units captured, and refunded (by us, the workflow or at Stripe). */
  captured: number;
  refunded: number;
}

export const orderActions = [
  "cancel",
  "hold",
  "release",
  "refund",
  "reship",
  "redrive",
  "correct-address",
] as const;
export type OrderAction = (typeof orderActions)[number];

export type Verdict =
  | { allowed: true }
  /** Not now, but soon on its own: a label purchase settles within one carrier call. */
  | { allowed: false; code: ErrorCode; why: string; wait?: true };

const includes = (list: readonly string[], value: string | null): boolean =>
  value !== null && list.includes(value);

/** Whether a label can still be handed back: bought, not scanned, not asked back already. */
export function labelVoidable(label: LabelFacts): boolean {
  return (
    label.status === "booked" &&
    label.labelRefundStatus === null &&
    (label.trackerStatus === null || includes(unscannedTrackerStatuses, label.trackerStatus))
  );
}

const yes: Verdict = { allowed: true };
const no = (code: ErrorCode, why: string, wait?: true): Verdict => ({
  allowed: false,
  code,
  why,
  ...(wait ? { wait } : {}),
});

/** Each action's rule, in words for the table and as a check for the callers. */
export interface ActionRule {
  action: OrderAction;
  label: string;
  /** The statuses it may happen in (other facts may still refuse it). */
  statuses: readonly OrderStatus[];
  /** The other facts it needs, in words. */
  requires: string;
  /** What it leaves owed: the work it starts, and who finishes it. */
  leaves: string;
  check(facts: OrderFacts): Verdict;
}

export const orderRules: Record<OrderAction, ActionRule> = {
  cancel: {
    action: "cancel",
    label: "Cancel",
    statuses: cancellableStatuses,
    requires:
      "shipped only while every current label is unscanned (null, unknown, pre_transit) and not asked back; inside CANCEL_WINDOW",
    leaves:
      "the run cancelled; its cleanup fences the order, hands every label back, releases the stock, voids or refunds the money, one e-mail",
    check(facts) {
      if (includes(unpaidStatuses, facts.status))
        return no(
          "order_not_cancellable",
          `it is ${facts.status}: it has not been paid, so there is nothing to cancel yet`,
        );
      if (!includes(cancellableStatuses, facts.status))
        return no("order_not_cancellable", `it is ${facts.status}: it can no longer be cancelled`);
      if (facts.labels.length > 0 && (facts.status !== "shipped" || !facts.labels.every(labelVoidable)))
        return no("order_not_cancellable", "its label was scanned: ask the carrier to intercept the parcel");
      return yes;
    },
  },
  hold: {
    action: "hold",
    label: "Hold",
    statuses: holdableStatuses,
    requires:
      "no label bought, none being bought (then it waits for the purchase), no hold but the fulfilment window",
    leaves: "the run waits for the release (no label bought meanwhile)",
    check(facts) {
      // A label bought (just now, or long ago): what ops need is the carrier's intercept.
      if (facts.labels.length > 0 && (facts.status === "fulfilling" || facts.status === "shipped"))
        return no("order_not_holdable", "it already has a label: ask the carrier to intercept the parcel");
      if (!includes(holdableStatuses, facts.status) || facts.cancelRequested)
        return no(
          "order_not_holdable",
          `it is ${facts.cancelRequested ? "being cancelled" : facts.status}: only a paid order not yet shipped can be held`,
        );
      if (facts.labels.length > 0)
        return no("order_not_holdable", "it already has a label: ask the carrier to intercept the parcel");
      if (facts.holdReason !== null && facts.holdReason !== "fulfilment_window")
        return no("order_not_holdable", "it is on hold already");
      if (facts.labelPurchaseInFlight)
        return no("order_not_holdable", "its label is being bought: the hold waits for the outcome", true);
      return yes;
    },
  },
  release: {
    action: "release",
    label: "Release hold",
    statuses: holdableStatuses,
    requires: "a hold",
    leaves: "the run wakes and buys the label",
    check(facts) {
      return facts.holdReason === null ? no("order_not_held", "it is not on hold") : yes;
    },
  },
  refund: {
    action: "refund",
    label: "Refund",
    statuses: [...inFulfilmentStatuses, ...bookedStatuses, "cancelled", "cancelled_out_of_stock"],
    requires:
      "money captured and not all of it refunded (an authorisation is voided by a cancel, not refunded)",
    leaves:
      "a refund at Stripe (key refund-<id>), one e-mail; a full refund also stops the order and hands the label back",
    check(facts) {
      if (facts.captured <= 0)
        return no("order_not_refundable", "nothing was captured: an authorisation is released by a cancel");
      if (facts.refunded >= facts.captured) return no("refund_exceeds_captured", "it is refunded in full");
      return yes;
    },
  },
  reship: {
    action: "reship",
    label: "Re-ship",
    statuses: ["shipped"],
    requires: "a current parcel not delivered; no cancel asked (checked again after the carrier call)",
    leaves: "a new label for the parcel, the old one handed back (scanned: ops told), one tracking e-mail",
    check(facts) {
      if (facts.status !== "shipped" || facts.cancelRequested)
        return no(
          "order_not_shipped",
          `it is ${facts.cancelRequested ? "being cancelled" : facts.status}: only a shipped order's parcel can be re-shipped`,
        );
      if (!facts.labels.some((label) => label.status === "booked"))
        return no("parcel_delivered", "every parcel was delivered");
      return yes;
    },
  },
  redrive: {
    action: "redrive",
    label: "Re-drive",
    statuses: [...inFulfilmentStatuses, ...redrivableBookedStatuses],
    requires:
      "no cancel asked; before the label (no label recorded), or booked (shipped, delivered) with a run failed since the last re-drive",
    leaves:
      "a new run (event id and key carry the generation); the old run's writes are refused (superseded)",
    check(facts) {
      if (facts.cancelRequested) return no("order_not_redrivable", "it is being cancelled");
      if (includes(inFulfilmentStatuses, facts.status) && facts.labels.length === 0) return yes;
      if (includes(redrivableBookedStatuses, facts.status) && facts.labels.length > 0 && facts.runFailed)
        return yes;
      return no(
        "order_not_redrivable",
        includes(redrivableBookedStatuses, facts.status)
          ? `it is ${facts.status} and its run has not failed`
          : `it is ${facts.status}: not paid, or ended`,
      );
    },
  },
  "correct-address": {
    action: "correct-address",
    label: "Correct the address",
    statuses: holdableStatuses,
    requires: "held for its address (the carrier could not deliver there); no cancel asked",
    leaves: "the address stored, the hold released: the run buys the label to the new address",
    check(facts) {
      if (facts.holdReason !== "address") return no("order_not_held", "it is not held for its address");
      if (facts.cancelRequested) return no("order_not_held", "it is being cancelled");
      return yes;
    },
  },
};

/** May `action` happen to an order with these facts, and if not, why. */
export function decide(action: OrderAction, facts: OrderFacts): Verdict {
  return orderRules[action].check(facts);
}

/**
 * After an outside effect (a label bought) whose record was refused: does the order still want
 * it? Yes when it is recorded as a current parcel (another run landed it), or when the order is
 * still in fulfilment and no cancel was asked (a re-drive's run finds it by its carrier reference).
 * No once a cancel is asked or the order ended: then the label is handed back.
 */
export function labelWanted(facts: { status: string; cancelRequested: boolean; recorded: boolean }): boolean {
  if (facts.recorded) return true;
  if (facts.cancelRequested) return false;
  return includes(inFulfilmentStatuses, facts.status);
}

/** A re-ship's new label may be recorded only while the order is shipped and no cancel was asked. */
export function reshipMayLand(facts: { status: string; cancelRequested: boolean }): boolean {
  return facts.status === "shipped" && !facts.cancelRequested;
}

/**
 * A refund Stripe made, recorded after its answer (the guarded write of src/orders/refund-order.ts):
 * a cancel's cleanup may have refunded "what is left" while the refund was in flight, so the
 * order's refunded total is the largest of what its refund rows, its payment record and Stripe say
 * (never lowered by a late answer), and what of it went beyond the capture is an over-refund: the
 * money cannot be taken back at Stripe, so it is recorded and ops are told, never dropped.
 */
export function refundLanding(facts: {
  captured: number;
  /** Sum of the order's succeeded refund rows, this one included. */
  succeededRows: number;
  /** The payment row's amount_refunded (the workflow's refunds are recorded there). */
  recorded: number;
  /** Refunded of the capture as Stripe reads now; null when it could not be asked. */
  atStripe: number | null;
}): { refunded: number; over: number } {
  const total = Math.max(facts.succeededRows, facts.recorded, facts.atStripe ?? 0);
  return { refunded: Math.min(total, facts.captured), over: Math.max(total - facts.captured, 0) };
}

/** The workflow's own writes: each lands only in these states (src/orders/fulfilment-records.ts). */
export const workflowWrites = [
  {
    write: "claim",
    statuses: ["authorized", "paid"] as const,
    requires: "no other run's claim, no cancel asked",
    leaves: "the run owns the order (claim_id); `fulfilling`",
  },
  {
    write: "record capture",
    statuses: ["fulfilling"] as const,
    requires: "this run's claim, no cancel asked",
    leaves: "refused: the money is returned by the run (or the cleanup)",
  },
  {
    write: "begin label purchase",
    statuses: ["fulfilling"] as const,
    requires: "this run's claim, no cancel asked, no hold but the fulfilment window",
    leaves: "the purchase mark; a hold asked now waits for the outcome",
  },
  {
    write: "record shipment",
    statuses: ["fulfilling"] as const,
    requires: "this run's claim, no cancel asked",
    leaves: "`shipped`; refused for any reason: the label handed back unless the order still wants it",
  },
  {
    write: "record re-ship",
    statuses: ["shipped"] as const,
    requires: "no cancel asked",
    leaves: "refused: the new label handed back, 409",
  },
  {
    write: "record a return label",
    statuses: ["requested", "approved"] as const,
    requires: "the return's status (not the order's); checked after the carrier call",
    leaves:
      "not wanted (the return ended meanwhile): handed back in the same step, ops told if refused, no e-mail",
  },
  {
    write: "record an exchange label",
    statuses: ["requested", "approved", "received"] as const,
    requires: "the return's status (not the order's); checked after the carrier call",
    leaves:
      "not wanted (the return ended meanwhile): handed back in the same step, ops told if refused, no e-mail",
  },
  {
    write: "record a refund made at Stripe",
    statuses: [...inFulfilmentStatuses, ...bookedStatuses, "cancelled", "cancelled_out_of_stock"] as const,
    requires: "the refund row still pending; checked after Stripe's answer (refundLanding)",
    leaves:
      "refunded total never lowered; beyond the capture (a cleanup refunded meanwhile): recorded, ops told once",
  },
  {
    write: "mark delivered",
    statuses: ["shipped"] as const,
    requires: "every current parcel delivered",
    leaves: "`delivered`; the review request after REVIEW_AFTER_DELIVERY",
  },
] as const;

/** Parcels: one label each, replaced by a re-ship (a new generation). */
export const parcelModel = {
  states: [
    "booked",
    "delivered",
    "superseded",
    "label asked back",
    "label refunded",
    "label refund rejected",
  ],
  transitions: [
    ["booked", "delivered", "the carrier's `delivered` event (repeats change nothing)"],
    ["booked", "superseded", "a re-ship records the next generation (the old label asked back, or ops told)"],
    [
      "booked",
      "label asked back",
      "a cancel, a full refund or a re-ship, while unscanned (null, unknown, pre_transit)",
    ],
    ["label asked back", "label refunded", "the carrier refunds it (track-label-refund)"],
    ["label asked back", "label refund rejected", "the carrier refuses (a scan meanwhile): ops told"],
  ],
} as const;

/**
 * Return statuses, and from which each action may move a return (src/returns: returns.ts for ops
 * and the customer, return-work.ts for the run). `refunded` is a fact on a received return, not a
 * status: the run closes it once refunded (and restocked or written off).
 */
export const returnStatuses = [
  "requested",
  "approved",
  "received",
  "closed",
  "rejected",
  "cancelled",
] as const;
export type ReturnStatusName = (typeof returnStatuses)[number];
export const returnTransitions = {
  approve: { from: ["requested"], to: "approved" },
  receive: { from: ["requested", "approved"], to: "received" },
  reject: { from: ["requested", "approved", "received"], to: "rejected" },
  close: { from: ["requested", "approved"], to: "closed" },
  "close after a refused exchange charge": { from: ["requested", "approved", "received"], to: "closed" },
  "close once refunded (the run)": { from: ["received"], to: "closed" },
  cancel: { from: ["requested", "approved"], to: "cancelled" },
} as const satisfies Record<string, { from: readonly ReturnStatusName[]; to: ReturnStatusName }>;

/**
 * After a return's label was bought (src/inngest/steps/return-label.ts, ship-exchange.ts): does the
 * return still want it? The return label while its parcel may still come (requested, approved); the
 * exchange's while the return is not ended (closed, rejected, cancelled). Not wanted: the step that bought it hands it
 * back (ops told when the carrier refuses), as the outbound labels are.
 */
export function returnLabelWanted(label: "return" | "exchange", status: ReturnStatusName): boolean {
  return label === "return"
    ? (returnTransitions.receive.from as readonly string[]).includes(status)
    : !["closed", "rejected", "cancelled"].includes(status);
}

/** What the model reads of a return (src/returns/return-records.ts's row). */
export interface ReturnFacts {
  status: ReturnStatusName;
  /** The refund was made: the money is back with the customer. */
  refunded: boolean;
  /** A dearer exchange's charge of the difference, when one was asked. */
  exchangeChargeStatus: string | null;
}

export const returnActions = ["approve", "reject", "receive", "close"] as const;
export type ReturnAction = (typeof returnActions)[number];

/** The statuses `action` may move a return from, given its facts. */
export function returnActionFrom(action: ReturnAction, facts: ReturnFacts): readonly ReturnStatusName[] {
  if (action === "close")
    // A refused exchange charge stopped the run: the return is ops' to end, even received.
    return facts.exchangeChargeStatus === "failed" || facts.exchangeChargeStatus === "awaiting_payment"
      ? returnTransitions["close after a refused exchange charge"].from
      : returnTransitions.close.from;
  // Once refunded, the money is back with the customer: nothing left to reject.
  if (action === "reject" && facts.refunded) return [];
  return returnTransitions[action].from;
}

const returnVerbs: Record<ReturnAction, string> = {
  approve: "approved",
  reject: "rejected",
  receive: "received",
  close: "closed",
};

/** May a person (ops, the customer, the carrier's tracker) do `action` to a return, and if not, why. */
export function decideReturn(action: ReturnAction, facts: ReturnFacts): Verdict {
  if (returnActionFrom(action, facts).includes(facts.status)) return yes;
  return no(
    "return_not_actionable",
    `it is ${facts.status}${facts.refunded ? " and refunded" : ""}: it cannot be ${returnVerbs[action]}`,
  );
}

/** What the model reads of an order a return is asked for (src/returns/records/request.ts, under its lock). */
export interface ReturnRequestFacts {
  status: OrderStatus;
  /** The last parcel's delivery, null while none is delivered. */
  deliveredAt: Date | null;
  /** Parcels not delivered yet. */
  undelivered: number;
  now: Date;
  /** RETURN_WINDOW in milliseconds. */
  windowMs: number;
}

/**
 * May a return be asked for (the customer's page, ops, the admin API): the order delivered, every
 * parcel, in a status the customer's page offers it in, and inside RETURN_WINDOW. The lines asked
 * for (not returned yet, an exchange's product) are checked by the request against the order's lines.
 */
export function decideReturnRequest(facts: ReturnRequestFacts): Verdict {
  const offered = customerRules["ask for a return"].statuses as readonly string[];
  if (!offered.includes(facts.status) || facts.deliveredAt === null || facts.undelivered > 0)
    return no("order_not_returnable", `it has not been delivered (status ${facts.status})`);
  if (facts.now.getTime() > facts.deliveredAt.getTime() + facts.windowMs)
    return no("return_window_closed", "its return window has closed");
  return yes;
}

/** Order facts from the admin view of an order (src/orders/order-details.ts). */
export function factsOfDetails(order: {
  status: OrderStatus;
  cancelRequestedAt: Date | null;
  hold: { reason: string } | null;
  shipments: readonly {
    supersededAt: Date | null;
    status: string;
    trackerStatus: string | null;
    labelRefundStatus: string | null;
  }[];
  payment: { amountCaptured: number; amountRefunded: number } | null;
  timeline: readonly { kind: string }[];
  labelPurchaseInFlight?: boolean;
}): OrderFacts {
  const kinds = order.timeline.map((entry) => entry.kind);
  const lastFailed = kinds.lastIndexOf("run-failed");
  return {
    status: order.status,
    cancelRequested: order.cancelRequestedAt !== null,
    holdReason: order.hold?.reason ?? null,
    labels: order.shipments
      .filter((shipment) => shipment.supersededAt === null)
      .map((shipment) => ({
        status: shipment.status === "delivered" ? "delivered" : "booked",
        trackerStatus: shipment.trackerStatus,
        labelRefundStatus: shipment.labelRefundStatus,
      })),
    runFailed: lastFailed >= 0 && lastFailed > kinds.lastIndexOf("redriven"),
    labelPurchaseInFlight: order.labelPurchaseInFlight ?? false,
    captured: order.payment?.amountCaptured ?? 0,
    refunded: order.payment?.amountRefunded ?? 0,
  };
}

/** The SQL list of `values`, for the statements that must be one statement (quoted literals). */
export function sqlList(values: readonly string[]): string {
  return values.map((value) => `'${value.replace(/'/g, "''")}'`).join(", ");
}

/** The model's tables in Markdown (docs/order-model.md between its markers). */
export function renderOrderModel(): string {
  const row = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  const lines: string[] = [];
  lines.push("### Order actions", "");
  lines.push(row(["Action", "Allowed in", "Also needs", "Leaves owed"]));
  lines.push(row(["---", "---", "---", "---"]));
  for (const rule of Object.values(orderRules)) {
    lines.push(
      row([rule.label, rule.statuses.map((s) => `\`${s}\``).join(", "), rule.requires, rule.leaves]),
    );
  }
  lines.push("", "### The customer's pages", "");
  lines.push(row(["Offer", "In", "Also needs"]));
  lines.push(row(["---", "---", "---"]));
  for (const [offer, rule] of Object.entries(customerRules)) {
    lines.push(row([offer, rule.statuses.map((s) => `\`${s}\``).join(", "), rule.requires]));
  }
  lines.push("", "### The workflow's guarded writes", "");
  lines.push(row(["Write", "Lands in", "Also needs", "Leaves"]));
  lines.push(row(["---", "---", "---", "---"]));
  for (const write of workflowWrites) {
    lines.push(
      row([write.write, write.statuses.map((s) => `\`${s}\``).join(", "), write.requires, write.leaves]),
    );
  }
  lines.push("", "### Parcels", "");
  lines.push(row(["From", "To", "When"]));
  lines.push(row(["---", "---", "---"]));
  for (const [from, to, when] of parcelModel.transitions) lines.push(row([from, to, when]));
  lines.push("", "### Returns", "");
  lines.push(row(["Action", "From", "To"]));
  lines.push(row(["---", "---", "---"]));
  for (const [action, { from, to }] of Object.entries(returnTransitions)) {
    lines.push(row([action, from.map((s) => `\`${s}\``).join(", "), `\`${to}\``]));
  }
  lines.push(
    "",
    "A return request (the customer's page, ops, the admin API) asks `decideReturnRequest` under the order's row lock: delivered (every parcel), in a status the customer's page offers it in, inside RETURN_WINDOW. A person's return actions (approve, reject, receive, close) ask `decideReturn`: a refunded return is not rejected, and `close` takes the refused-exchange-charge row when the charge failed or waits for the customer.",
  );
  return `${lines.join("\n")}\n`;
}
