import type { EmbeddedPostgres } from "../../src/dev/embedded-postgres";

/**
 * The embedded PostgreSQL the global setup started, for the global teardown (both run in jest's
 * main process; a global survives between them, module state may not).
 */
interface Started {
  folder: string;
  server: EmbeddedPostgres;
}

const key = Symbol.for("order-fulfillment.test-postgres");
const holder = globalThis as unknown as Record<symbol, Started | undefined>;

export const testPostgres = {
  set(started: Started): void {
    holder[key] = started;
  },
  take(): Started | undefined {
    const started = holder[key];
    holder[key] = undefined;
    return started;
  },
};
