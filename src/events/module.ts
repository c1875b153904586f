import { sqlPool, type Database } from "../db/client";
import type { Logger } from "../logger";
import {
  createLifecycleOutbox,
  type LifecycleEventSink,
  type LifecycleOutbox,
  type OutboxCompanions,
} from "./lifecycle-outbox";

/**
 * The lifecycle events (issue 40, docs/lifecycle-events.md), as the wiring takes them: the outbox's
 * sender, started with the services and stopped before the database closes. `sink` is an Inngest
 * client without the encryption middleware: these events are the shop's contract, read by code that
 * holds no key of ours, and carry no customer personal data.
 */
export function createLifecycleEventsModule(deps: {
  db: Database;
  databaseUrl: string;
  sink: LifecycleEventSink;
  logger: Logger;
  /** The webhook deliveries' events, sent with the lifecycle events they fan out. */
  companions?: OutboxCompanions;
}): LifecycleOutbox {
  return createLifecycleOutbox({
    pool: sqlPool(deps.db),
    databaseUrl: deps.databaseUrl,
    sink: deps.sink,
    logger: deps.logger.child({ component: "lifecycle-outbox" }),
    ...(deps.companions ? { companions: deps.companions } : {}),
  });
}
