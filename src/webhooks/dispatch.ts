import type pg from "pg";
import { webhookDeliveryEvent } from "../events/webhook-contracts";

/**
 * The lifecycle outbox's companion (src/events/lifecycle-outbox.ts): for the events it is about to
 * send, the delivery-requested event of each of their webhook deliveries (written by the fan-out
 * trigger in the events' own transaction). Read inside the outbox's transaction and sent in the
 * same batch, with ids derived from the deliveries: a crash before the batch is marked sent sends
 * them again with the same ids, which Inngest drops; none is lost, none doubled.
 */
export async function webhookDeliveryEvents(
  client: pg.PoolClient,
  eventIds: string[],
): Promise<{ id: string; name: string; data: object; ts: number }[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await client.query<{ id: string; endpoint_id: string; created_at: Date }>(
    `SELECT id, endpoint_id, created_at FROM webhook_deliveries WHERE event_id = ANY($1) AND status = 'pending' ORDER BY created_at, id`,
    [eventIds],
  );
  return rows.map((row) => ({
    ...webhookDeliveryEvent(row.id, row.endpoint_id),
    ts: row.created_at.getTime(),
  }));
}
