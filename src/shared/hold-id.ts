/**
 * Names an order's fulfilment hold in its release event and in the workflow's looks at it: the
 * time it was placed (`held_at`), in milliseconds.
 */
export const holdIdOf = (since: Date): string => String(since.getTime());
