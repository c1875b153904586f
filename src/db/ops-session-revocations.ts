import type { Database } from "./client";

/**
 * The ops console's logouts in the database (table ops_session_revocations), so a logged-out cookie
 * stays refused after a restart and by every replica. Keys are hashes of the session nonces.
 */
export function createDatabaseSessionRevocations(db: Database) {
  return {
    async revoke(nonceHash: string, expiresAt: Date): Promise<void> {
      await db.opsSessionRevocation.upsert({
        where: { nonceHash },
        create: { nonceHash, expiresAt },
        update: {},
      });
      // What has expired is refused by its expiry already; the table keeps only live revocations.
      await db.opsSessionRevocation.deleteMany({ where: { expiresAt: { lt: new Date() } } });
    },
    async isRevoked(nonceHash: string): Promise<boolean> {
      const row = await db.opsSessionRevocation.findUnique({
        where: { nonceHash },
        select: { nonceHash: true },
      });
      return row !== null;
    },
  };
}
