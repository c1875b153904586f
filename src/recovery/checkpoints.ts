import type { Database } from "../db/client";

/** Durable progress markers of the recovery sweeps (table recovery_checkpoints). */
export interface RecoveryCheckpoints {
  get(name: string): Promise<Date | null>;
  /** Moves the cursor forward only: a late or repeated write never moves it back. */
  advance(name: string, cursor: Date): Promise<void>;
}

export function createRecoveryCheckpoints(db: Database): RecoveryCheckpoints {
  return {
    async get(name) {
      const row = await db.recoveryCheckpoint.findUnique({ where: { name } });
      return row?.cursor ?? null;
    },

    async advance(name, cursor) {
      await db.$executeRaw`
        INSERT INTO recovery_checkpoints (name, cursor, updated_at) VALUES (${name}, ${cursor}, now())
        ON CONFLICT (name) DO UPDATE
        SET cursor = GREATEST(recovery_checkpoints.cursor, EXCLUDED.cursor), updated_at = now()`;
    },
  };
}
