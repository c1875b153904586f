import type { Database } from "../db/client";
import {
  combineReadiness,
  createDatabaseReadiness,
  createInngestDevServerReadiness,
  type ReadinessProbe,
} from "./readiness";

/** /ready: the database (migrated), and the Inngest dev server when the app runs against one. */
export async function createReadiness(
  db: Database,
  devServerUrl: string | undefined,
): Promise<ReadinessProbe> {
  const databaseReadiness = await createDatabaseReadiness(db);
  return devServerUrl === undefined
    ? databaseReadiness
    : combineReadiness([databaseReadiness, createInngestDevServerReadiness(devServerUrl)]);
}
