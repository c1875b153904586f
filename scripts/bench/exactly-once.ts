/**
 * bench:webhook's exactly-once check, order by order: every first delivery the load generator was
 * handed, what it and any redelivery were answered, and whether its order was announced (marked on
 * the order) and its shop/order.placed accepted. When the three counts of the `exactly once` line
 * differ, the orders that make the difference are printed with what the database holds of them,
 * so a run that shows it also says why.
 */

export interface Answer {
  status: number;
  /** The answer's body, cut short: the intake's `{received, outcome, orderId, announced}`. */
  body: string;
}

/** One first delivery, in the order the load generator was handed them. */
export interface Delivery {
  orderId: string;
  /** The row that sent it. */
  row: string;
  /** Undefined while no answer has arrived (the bench waits for every answer before it counts). */
  first?: Answer;
  redeliveries: Answer[];
}

/** An order delivered but not announced and accepted exactly once, or announced but not delivered. */
export interface Difference {
  orderId: string;
  delivery?: Delivery;
  /** Marked announced on the order (`placed_event_sent_at` set). */
  announced: boolean;
  /** How many shop/order.placed for it the event API accepted. */
  accepted: number;
}

export function answerOf(status: number, body: string): Answer {
  return { status, body: body.length > 200 ? `${body.slice(0, 200)}…` : body };
}

/**
 * The orders on which the counts part: delivered and not (announced and accepted once), and
 * announced or accepted without having been delivered. In delivery order, then the others.
 */
export function differences(input: {
  deliveries: readonly Delivery[];
  /** Ids of the orders marked announced. */
  announced: Iterable<string>;
  /** `data.orderId` of every shop/order.placed the event API accepted. */
  accepted: readonly string[];
}): Difference[] {
  const announced = new Set(input.announced);
  const accepted = new Map<string, number>();
  for (const id of input.accepted) accepted.set(id, (accepted.get(id) ?? 0) + 1);
  const delivered = new Set<string>();
  const found: Difference[] = [];
  for (const delivery of input.deliveries) {
    delivered.add(delivery.orderId);
    const times = accepted.get(delivery.orderId) ?? 0;
    const marked = announced.has(delivery.orderId);
    if (!marked || times !== 1)
      found.push({ orderId: delivery.orderId, delivery, announced: marked, accepted: times });
  }
  for (const orderId of new Set([...announced, ...accepted.keys()])) {
    if (delivered.has(orderId)) continue;
    found.push({ orderId, announced: announced.has(orderId), accepted: accepted.get(orderId) ?? 0 });
  }
  return found;
}

/** `{"200": 1563, "500": 2}`: how first deliveries were answered, warm-up included. */
export function firstAnswers(deliveries: readonly Delivery[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { first } of deliveries) {
    const key = first ? String(first.status) : "unanswered";
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/**
 * The deliveries Stripe would retry: their last answer (the latest redelivery's, else the first
 * delivery's) is not a 2xx. Indices into `deliveries`.
 */
export function owedRetry(deliveries: readonly Delivery[]): number[] {
  return deliveries.flatMap((delivery, index) => {
    const last = delivery.redeliveries.at(-1) ?? delivery.first;
    return last !== undefined && last.status >= 200 && last.status < 300 ? [] : [index];
  });
}
