import type { Inngest } from "inngest";
import { AppError } from "../errors";
import type { OutgoingEvent } from "./contracts";

export type { OutgoingEvent } from "./contracts";

/** Sends events to Inngest. Throws when Inngest did not accept them, so callers can answer 5xx. */
export interface EventPublisher {
  publish(event: OutgoingEvent): Promise<void>;
}

/**
 * The one message for "Inngest did not take the event": a 503 `inngest_unavailable` names Inngest,
 * never the database. Without this, the SDK's `fetch failed` (its cause ECONNREFUSED, the same
 * socket code a lost database connection carries) reached the HTTP error handler as a 503
 * `database_unavailable`, and a developer whose Inngest dev server was not running went looking
 * at PostgreSQL.
 */
export function inngestUnavailable(what: string, cause: unknown): AppError {
  return new AppError(
    "inngest_unavailable",
    `Inngest did not accept ${what} (unreachable or refusing it); retry shortly`,
    { cause },
  );
}

export function createInngestPublisher(inngest: Inngest): EventPublisher {
  return {
    async publish(event) {
      try {
        await inngest.send(event);
      } catch (error) {
        throw inngestUnavailable(event.name, error);
      }
    },
  };
}
