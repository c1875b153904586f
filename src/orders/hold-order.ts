import { sqlPool, type Database } from "../db/client";
import { holdIdOf } from "../shared/hold-id";
import { AppError } from "../errors";
import { holdReleasedEvent, orderPlacedEvent } from "../events/contracts";
import type { EventPublisher } from "../events/publisher";
import { timelineKindSql } from "../timeline/kinds";
import type { Actor } from "./actor";
import type { OrderStatus } from "./order-repository";
import { labelPurchaseLeaseMs } from "./fulfilment-records";
import { decide, holdableStatuses as modelHoldableStatuses } from "../shared/order-model";
import { checkAction, refusal, type OrderFactsReader } from "./model-check";
import { createOrderRedrive } from "./redrive-order";

/** Why ops (or the service itself) hold an order back from the carrier. */
export const opsHoldReasons = ["high_risk", "address", "customer_request", "other"] as const;
export type OpsHoldReason = (typeof opsHoldReasons)[number];
/**
 * `fulfilment_window` is FULFILMENT_HOLD, placed by the run itself; ops may replace it with a
 * reason of their own (the run then waits for their release) or release it early.
 */
export type HoldReason = OpsHoldReason | "fulfilment_window" | "dispute" | "radar_review";

export const holdReasonLabels: Record<HoldReason, string> = {
  high_risk: "high risk",
  address: "address to check",
  customer_request: "customer request",
  other: "other",
  fulfilment_window: "fulfilment window (FULFILMENT_HOLD)",
  dispute: "payment disputed at Stripe",
  radar_review: "Stripe Radar review or fraud warning",
};

export interface Hold {
  reason: HoldReason;
  note: string | null;
  since: Date;
  by: string | null;
  /** Names this hold in its release event: the time it was placed, in milliseconds. */
  holdId: string;
}

/** Orders a hold still makes sense for: paid, no label bought yet (the order model's list). */
export const holdableStatuses: readonly OrderStatus[] = modelHoldableStatuses;

/**
 * placeHold's write: holds a holdable order (paid, not being cancelled, no label, no hold of its
 * own: only a fulfilment-window hold is replaced), unless a label is being bought (its lease
 * not yet run out: the hold would not hold, decision 0170; holdOrder waits), with its entry.
 */
const placeHoldStatement = `
  WITH placed AS (
    UPDATE orders o
    SET hold_reason = $2::text, hold_note = $3, held_at = $4::timestamptz, held_by = $5, updated_at = now()
    WHERE o.id = $1::uuid AND o.status = ANY($6::order_status[])
      AND o.cancel_requested_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id)
      AND (o.hold_reason IS NULL OR ($2::text <> 'fulfilment_window' AND o.hold_reason = 'fulfilment_window'))
      AND (o.label_purchase_started_at IS NULL OR o.label_purchase_started_at < $7::timestamptz)
    RETURNING o.id
  ),
  entry AS (
    INSERT INTO order_timeline (order_id, kind, detail)
    SELECT id, ${timelineKindSql("hold-placed")}, $8::jsonb FROM placed
  )
  SELECT count(*)::int AS placed FROM placed`;

/**
 * Fulfilment holds: while an order has one (`hold_reason`), its fulfilment run buys no label; it
 * waits, durably (step.waitForEvent on shop/order.hold-released), holding no concurrency slot. The
 * mechanism is shared: ops hold and release from the console and the admin API, the address check
 * holds an undeliverable order, and anything else that must stop a parcel (a dispute, a Radar
 * review) calls placeHold(orderId, reason) and releaseHold(orderId) the same way.
 */
export function createHolds(deps: { db: Database; publisher: EventPublisher }) {
  const { db, publisher } = deps;
  const sql = sqlPool(db);

  const redrive = createOrderRedrive(db);

  /**
   * The run this hold stopped has ended (it returned `stopped: "held"`): no wait of its own hears
   * the release, so the order goes to a new run, a re-drive (its event id and idempotency key carry
   * the new generation: a repeated publish starts nothing more). Not re-drivable any more (being
   * cancelled, say): nothing to resume. A crash between the release and this publish leaves the
   * order released with no run: ops re-drive it (docs/holds-and-labels.md).
   */
  async function resumeStoppedRun(orderId: string, by: string): Promise<void> {
    const event = await redrive.prepare(orderId, by);
    if (event) await publisher.publish(orderPlacedEvent(event.data, event.generation));
  }

  async function current(orderId: string): Promise<Hold | null> {
    // Straight to pg: the workflow's looks at the hold after the first ask it (docs/benchmarks.md).
    const { rows } = await sql.query<{
      holdReason: string | null;
      holdNote: string | null;
      heldAt: Date | null;
      heldBy: string | null;
    }>(
      `SELECT hold_reason AS "holdReason", hold_note AS "holdNote", held_at AS "heldAt", held_by AS "heldBy"
       FROM orders WHERE id = $1::uuid`,
      [orderId],
    );
    const order = rows[0];
    if (!order?.holdReason || !order.heldAt) return null;
    return {
      reason: order.holdReason as HoldReason,
      note: order.holdNote,
      since: order.heldAt,
      by: order.heldBy,
      holdId: holdIdOf(order.heldAt),
    };
  }

  /**
   * Holds the order, or says why not (null: unknown order, label bought, ended, or already held
   * for a reason of its own). Only a fulfilment-window hold is replaced.
   */
  async function placeHold(
    orderId: string,
    reason: HoldReason,
    options: { note?: string; by?: string } = {},
  ): Promise<Hold | null> {
    const since = new Date();
    // One statement: the conditional UPDATE and, only when it held the order, its `hold-placed`
    // entry, the lifecycle event's source (shop/order.fulfilment-held.v1, decision 0196), so the
    // hold and its event commit together. Straight to pg like the release: one round trip.
    const { rows } = await sql.query<{ placed: number }>(placeHoldStatement, [
      orderId,
      reason,
      options.note ?? null,
      since.toISOString(),
      options.by ?? null,
      [...holdableStatuses],
      new Date(since.getTime() - labelPurchaseLeaseMs).toISOString(),
      JSON.stringify({
        reason,
        ...(options.note ? { note: options.note } : {}),
        ...(options.by ? { by: options.by } : {}),
      }),
    ]);
    const placed = rows[0]?.placed ?? 0;
    if (placed === 0) return null;
    return { reason, note: options.note ?? null, since, by: options.by ?? null, holdId: holdIdOf(since) };
  }

  /**
   * Ends the order's hold (only one of `onlyReason`, when given) and wakes its run. Null when the
   * order was not held (or held for another reason).
   */
  async function releaseHold(
    orderId: string,
    options: { by?: string; onlyReason?: HoldReason } = {},
  ): Promise<Hold | null> {
    const held = await current(orderId);
    if (!held || (options.onlyReason && held.reason !== options.onlyReason)) return null;
    // Conditional on the hold read: a hold placed again meanwhile is not released by this call.
    // Under the row lock, it takes the mark of a run this hold stopped at its label purchase
    // (beginLabelPurchase sets it in the same lock): one release, one resumption (decision 0201).
    // Its `hold-released` entry in the same statement: the entry is the lifecycle event's source
    // (shop/order.fulfilment-released.v1, decision 0196), written only when the hold ended.
    const { rows } = await sql.query<{ run_stopped: boolean }>(
      `WITH old AS (SELECT hold_stopped_run_at FROM orders WHERE id = $1::uuid FOR UPDATE),
       released AS (
         UPDATE orders o
         SET hold_reason = NULL, hold_note = NULL, held_at = NULL, held_by = NULL,
             hold_stopped_run_at = NULL, updated_at = now()
         FROM old
         WHERE o.id = $1::uuid AND o.held_at = $2::timestamptz AND o.hold_reason = $3
         RETURNING o.id, old.hold_stopped_run_at IS NOT NULL AS run_stopped
       ),
       entry AS (
         INSERT INTO order_timeline (order_id, kind, detail)
         SELECT id, ${timelineKindSql("hold-released")}, $4::jsonb FROM released
       )
       SELECT run_stopped FROM released`,
      [
        orderId,
        held.since.toISOString(),
        held.reason,
        JSON.stringify({
          reason: held.reason,
          heldSince: held.since.toISOString(),
          ...(options.by ? { by: options.by } : {}),
        }),
      ],
    );
    const [released] = rows;
    if (!released) return null;
    await publisher.publish(holdReleasedEvent({ orderId, holdId: held.holdId }));
    if (released.run_stopped) await resumeStoppedRun(orderId, options.by ?? "workflow");
    return held;
  }

  return { current, placeHold, releaseHold };
}

export type Holds = ReturnType<typeof createHolds>;

export interface HoldRequest {
  orderId: string;
  reason: OpsHoldReason;
  note?: string;
  by: Actor;
}

/** How often a hold asked during a label purchase looks whether the purchase has settled. */
const purchasePollMs = 50;
/** How long a hold waits for a purchase to settle before asking ops to try again. */
const purchaseWaitMs = 30_000;

/**
 * Hold, from the admin API or the console: the order buys no label until released.
 *
 * Asked while the fulfilment run is buying the label (decision 0170), it waits for the purchase
 * to settle, then answers with what happened: held (the purchase failed or was refused, no label),
 * or 409 `order_not_holdable` naming the label's tracking numbers, for ops to ask the carrier to intercept.
 * Never 200 for a hold that did not hold. It polls: a purchase takes one carrier call (seconds),
 * and PostgreSQL LISTEN would need a connection of its own per waiting request.
 */
export async function holdOrder(
  deps: { holds: Holds; db: Database; facts: OrderFactsReader; purchaseWaitMs?: number },
  request: HoldRequest,
) {
  const { orderId } = request;
  // The order model first (decision 0170): refused now is the answer, except a purchase in
  // flight, which is waited out below; placeHold's statement is the fence after it.
  await checkAction(deps.facts, orderId, "hold", { returnWaits: true });
  const waitUntil = Date.now() + (deps.purchaseWaitMs ?? purchaseWaitMs);
  for (;;) {
    const hold = await deps.holds.placeHold(orderId, request.reason, {
      ...(request.note ? { note: request.note } : {}),
      by: request.by,
    });
    if (hold)
      return { orderId, status: "held" as const, reason: hold.reason, since: hold.since.toISOString() };
    const facts = await deps.facts(orderId);
    if (!facts) throw new AppError("order_not_found", `Order ${orderId} does not exist`);
    const verdict = decide("hold", facts);
    if (verdict.allowed) {
      // The model and the statement read the order at different moments: it changed in between.
      throw new AppError("order_not_holdable", `Order ${orderId} changed as it was held: ask again`);
    }
    if (!verdict.wait) return refuseHold(deps, orderId, verdict);
    if (Date.now() > waitUntil) {
      throw new AppError(
        "order_not_holdable",
        `Order ${orderId}'s label is being bought and the carrier has not answered yet: ask again in a moment`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, purchasePollMs));
  }
}

/**
 * The model's refusal of the hold, as the error the caller answers with: with the labels'
 * tracking numbers when a label was bought (for ops to ask the carrier to intercept the parcel).
 */
async function refuseHold(
  deps: { db: Database },
  orderId: string,
  verdict: Extract<ReturnType<typeof decide>, { allowed: false }>,
): Promise<never> {
  const order = await deps.db.order.findUnique({
    where: { id: orderId },
    select: { shipments: { where: { supersededAt: null }, select: { trackingNumber: true } } },
  });
  const tracking = order?.shipments.map((shipment) => shipment.trackingNumber) ?? [];
  throw tracking.length > 0
    ? refusal(orderId, "hold", verdict, {
        more: `tracking ${tracking.join(", ")}; or cancel the order before the first scan`,
        details: { trackingNumbers: tracking },
      })
    : refusal(orderId, "hold", verdict);
}

/** Release, from the admin API or the console: the order's run goes on to buy the label. */
export async function releaseOrderHold(
  deps: { holds: Holds; facts: OrderFactsReader },
  { orderId, by }: { orderId: string; by: Actor },
) {
  // The order model first (decision 0170); releaseHold's conditional write is the fence after it.
  await checkAction(deps.facts, orderId, "release");
  const released = await deps.holds.releaseHold(orderId, { by });
  if (released) return { orderId, status: "released" as const, reason: released.reason };
  // Released by someone else between the model's read and the write.
  throw new AppError("order_not_held", `Order ${orderId} cannot be released: it is not on hold`);
}
