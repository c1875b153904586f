import { rm } from "node:fs/promises";
import { testPostgres } from "./test-postgres";

/** Stops the embedded PostgreSQL of the run (when the global setup started one) and removes its files. */
export default async function globalTeardown(): Promise<void> {
  const started = testPostgres.take();
  if (!started) return;
  await started.server.stop();
  await rm(started.folder, { recursive: true, force: true });
}
