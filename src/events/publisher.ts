import type { Inngest } from "inngest";

export interface OutgoingEvent {
  name: string;
  data: Record<string, unknown>;
  /** Inngest drops a second event with the same id within 24 hours. */
  id: string;
}

/** Sends events to Inngest. Throws when Inngest did not accept them, so callers can answer 5xx. */
export interface EventPublisher {
  publish(event: OutgoingEvent): Promise<void>;
}

export function createInngestPublisher(inngest: Inngest): EventPublisher {
  return {
    async publish(event) {
      await inngest.send(event);
    },
  };
}
