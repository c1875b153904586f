import type { Inngest } from "inngest";
import type { OutgoingEvent } from "./contracts";

export type { OutgoingEvent } from "./contracts";

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
