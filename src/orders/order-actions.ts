import type { EventPublisher } from "../events/publisher";
import type { EmailRenderer } from "../notifications/email-renderer";
import type { EmailSender } from "../notifications/email-sender";
import { resendOrderEmail, type ResendResult } from "../notifications/resend-email";
import type { Database } from "../db/client";
import type { Timeline } from "../timeline/timeline";
import { cancelOrder, type CancelRequest } from "./cancel-order";
import type { OrderRepository } from "./order-repository";
import { redriveOrder, type OrderRedrive } from "./redrive-order";
import type { RefundOutcome, RefundRequest, Refunds } from "./refund-order";

import type { LabelVoids } from "../shipping/label-void";
import { holdOrder, releaseOrderHold, type HoldRequest, type Holds } from "./hold-order";
import type { Actor } from "./actor";
import { orderFactsReader } from "./model-check";
import { reshipParcel, type ReshipDeps, type ReshipRequest, type ReshipResult } from "./reship-parcel";

export type { Actor } from "./actor";

/**
 * What ops can do to an order. Each action is one use case in the file of its domain
 * (cancel-order.ts, refund-order.ts, redrive-order.ts, notifications/resend-email.ts), composed
 * here once; the admin API (admin-routes.ts) and the ops console (src/pages/ops) are given this same
 * object, so both doors run the same rules and write the same records, differing only in `by`.
 * A new action (a hold, a return) is a new use case and a new member here.
 */
export interface OrderActions {
  cancel(request: CancelRequest): Promise<{ orderId: string; status: "cancellation_requested" }>;
  refund(request: RefundRequest): Promise<RefundOutcome>;
  redrive(request: { orderId: string; by: Actor }): Promise<Awaited<ReturnType<typeof redriveOrder>>>;
  resendEmail(request: { orderId: string; emailId: string; by: Actor }): Promise<ResendResult>;
  hold(request: HoldRequest): Promise<Awaited<ReturnType<typeof holdOrder>>>;
  releaseHold(request: { orderId: string; by: Actor }): Promise<Awaited<ReturnType<typeof releaseOrderHold>>>;
  /** A new label for one parcel of a shipped order, the old one handed back (reship-parcel.ts). */
  reship(request: ReshipRequest): Promise<ReshipResult>;
}

export function createOrderActions(deps: {
  db: Database;
  orders: OrderRepository;
  publisher: EventPublisher;
  timeline: Pick<Timeline, "record">;
  redrive: OrderRedrive;
  refunds: Refunds;
  sender: EmailSender;
  renderer: EmailRenderer;
  cancelWindowMs: number;
  /** CHECKOUT_SESSION_TTL, named when a pending order cannot be cancelled. */
  checkoutSessionTtl?: string;
  labels: Pick<LabelVoids, "voidable" | "voidShipment" | "isVoidable" | "handBackUnrecorded">;
  holds: Holds;
  /** What a re-ship needs beyond the above: the carrier, the shipments, the e-mail. */
  reship?: Omit<ReshipDeps, "db" | "labels" | "timeline" | "facts">;
}): OrderActions {
  const { db, orders, publisher, timeline, redrive, refunds, sender, renderer, cancelWindowMs, labels } =
    deps;
  // Every action asks the one order model first (decision 0170), on facts read in one statement.
  const facts = orderFactsReader(db);
  return {
    cancel: (request) =>
      cancelOrder(
        {
          orders,
          publisher,
          timeline,
          cancelWindowMs,
          ...(deps.checkoutSessionTtl ? { checkoutSessionTtl: deps.checkoutSessionTtl } : {}),
          facts,
        },
        request,
      ),
    refund: (request) => refunds.refund(request),
    redrive: (request) => redriveOrder({ redrive, publisher, facts }, request),
    resendEmail: (request) => resendOrderEmail({ db, sender, renderer, timeline }, request),
    hold: (request) => holdOrder({ holds: deps.holds, db, facts }, request),
    releaseHold: (request) => releaseOrderHold({ holds: deps.holds, facts }, request),
    reship: async (request) => {
      // Every real composition wires it (src/wiring.ts); some tests compose the actions without a carrier.
      if (!deps.reship) throw new Error("re-ship needs a carrier: createOrderActions got no `reship`");
      return reshipParcel({ ...deps.reship, db, labels, timeline, facts }, request);
    },
  };
}
