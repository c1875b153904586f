import type { Database } from "../db/client";
import { AppError } from "../errors";
import { fulfilmentKey, orderPlacedEvent, type OrderPlacedEvent } from "../events/contracts";
import type { EventPublisher } from "../events/publisher";
import { createTimeline } from "../timeline/timeline";
import type { Actor } from "./actor";
import { checkAction, refusal, type OrderFactsReader } from "./model-check";
import { decide, inFulfilmentStatuses, redrivableBookedStatuses, sqlList } from "../shared/order-model";

/** shop/order.placed for the re-drive, with the generation its id and key carry. */
export type RedriveEvent = OrderPlacedEvent & { generation: number };

export interface OrderRedrive {
  /**
   * Hands a failed or stalled order to a new fulfilment run: in one conditional UPDATE it bumps
   * the order's re-drive generation and lets go of the old run's claim, then returns the
   * shop/order.placed event (id and idempotency key carry the generation) to send. Null when the
   * order is not re-drivable: unknown, cancel requested, not paid, already shipped or ended.
   */
  prepare(orderId: string, by: string): Promise<RedriveEvent | null>;
  /** Whether the order exists at all (to tell "unknown" from "not re-drivable"). */
  exists(orderId: string): Promise<boolean>;
}

interface Row {
  id: string;
  customer_id: string;
  email: string;
  total: number;
  currency: string;
  payment_intent_id: string | null;
  redrive_generation: number;
}

export function createOrderRedrive(db: Database): OrderRedrive {
  const timeline = createTimeline(db);
  return {
    async prepare(orderId, by) {
      // The order model's re-drive rule (order-model.ts), as one statement.
      const [row] = await db.$queryRawUnsafe<Row[]>(
        `
        UPDATE orders o
        SET redrive_generation = o.redrive_generation + 1, claim_id = NULL, hold_stopped_run_at = NULL,
            updated_at = now()
        WHERE o.id = $1::uuid
          AND o.cancel_requested_at IS NULL
          AND (
            (o.status IN (${sqlList(inFulfilmentStatuses)})
             AND NOT EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id))
            -- Booked, and its run failed since it was last handed on: the new run resumes after
            -- the booking (fulfill-order), never booking or charging again.
            OR (o.status IN (${sqlList(redrivableBookedStatuses)})
                AND EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id)
                AND EXISTS (SELECT 1 FROM order_timeline t
                            WHERE t.order_id = o.id AND t.kind = 'run-failed'
                              AND t.created_at > COALESCE((SELECT max(r.created_at) FROM order_timeline r
                                                           WHERE r.order_id = o.id AND r.kind = 'redriven'),
                                                          '-infinity'::timestamptz)))
          )
        RETURNING o.id, o.customer_id, o.email, o.total, o.currency, o.payment_intent_id, o.redrive_generation`,
        orderId,
      );
      if (!row) return null;
      const generation = row.redrive_generation;
      await timeline.record(orderId, "redriven", { generation, by });
      const event = orderPlacedEvent(
        {
          orderId,
          customerId: row.customer_id,
          email: row.email,
          total: row.total,
          // Exactly as the intake sends it (src/orders/intake/stripe-intake.ts).
          currency: row.currency.trim().toLowerCase(),
          paymentIntentId: row.payment_intent_id,
          fulfilmentKey: fulfilmentKey(orderId, generation),
        },
        generation,
      );
      return { ...event, generation };
    },

    async exists(orderId) {
      const rows = await db.$queryRaw<unknown[]>`SELECT 1 FROM orders WHERE id = ${orderId}::uuid`;
      return rows.length > 0;
    },
  };
}

/** Re-drive, from the admin API or the console: hand the order to a new run now, or say why not. */
export async function redriveOrder(
  deps: { redrive: OrderRedrive; publisher: EventPublisher; facts: OrderFactsReader },
  { orderId, by }: { orderId: string; by: Actor },
) {
  // The order model first (decision 0170); prepare's statement is the fence after it.
  await checkAction(deps.facts, orderId, "redrive");
  const event = await deps.redrive.prepare(orderId, by);
  if (!event) {
    if (!(await deps.redrive.exists(orderId)))
      throw new AppError("order_not_found", `Order ${orderId} does not exist`);
    // Moved on since the model's read: its reason on the facts now, when it has one.
    const now = await deps.facts(orderId);
    const verdict = now ? decide("redrive", now) : null;
    if (verdict && !verdict.allowed) throw refusal(orderId, "redrive", verdict);
    throw new AppError(
      "order_not_redrivable",
      `Order ${orderId} cannot be re-driven: it is not paid, is being cancelled, is ended, or is shipped and its run has not failed`,
    );
  }
  await deps.publisher.publish(orderPlacedEvent(event.data, event.generation));
  return {
    orderId,
    status: "redrive_requested" as const,
    generation: event.generation,
    eventId: event.id,
  };
}
