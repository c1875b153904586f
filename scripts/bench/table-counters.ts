import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "pg";

/** One table's cumulative counters from pg_stat_user_tables. */
export interface TableCounter {
  seqScan: number;
  seqTupRead: number;
  idxScan: number;
  idxTupFetch: number;
}

export type TableCounters = Map<string, TableCounter>;

/**
 * A backend reports its table counters to the cumulative statistics when a transaction ends, at
 * most once a second, and an idle one within PGSTAT_IDLE_INTERVAL (10 s): read the counters only
 * after that long without new work, or the last second's scans are missing.
 */
const flushMs = 11_000;

/**
 * The counters of every table in the database (the engine's schema included), after waiting for
 * every backend to have reported its last work. Names are `table` for public, `schema.table`
 * otherwise.
 */
export async function tableCounters(databaseUrl: string): Promise<TableCounters> {
  await sleep(flushMs);
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{
      name: string;
      seq_scan: string;
      seq_tup_read: string;
      idx_scan: string | null;
      idx_tup_fetch: string | null;
    }>(
      `SELECT CASE WHEN schemaname = 'public' THEN relname ELSE schemaname || '.' || relname END AS name,
              seq_scan, seq_tup_read, idx_scan, idx_tup_fetch
       FROM pg_stat_user_tables`,
    );
    return new Map(
      rows.map((row) => [
        row.name,
        {
          seqScan: Number(row.seq_scan),
          seqTupRead: Number(row.seq_tup_read),
          idxScan: Number(row.idx_scan ?? 0),
          idxTupFetch: Number(row.idx_tup_fetch ?? 0),
        },
      ]),
    );
  } finally {
    await client.end();
  }
}

/** What changed between two readings, per unit (an order), for every table that moved. */
export function tableCounterDelta(before: TableCounters, after: TableCounters, per: number): TableCounters {
  const delta: TableCounters = new Map();
  for (const [name, now] of after) {
    const was = before.get(name) ?? { seqScan: 0, seqTupRead: 0, idxScan: 0, idxTupFetch: 0 };
    const moved = {
      seqScan: (now.seqScan - was.seqScan) / per,
      seqTupRead: (now.seqTupRead - was.seqTupRead) / per,
      idxScan: (now.idxScan - was.idxScan) / per,
      idxTupFetch: (now.idxTupFetch - was.idxTupFetch) / per,
    };
    if (moved.seqScan || moved.seqTupRead || moved.idxScan || moved.idxTupFetch) delta.set(name, moved);
  }
  return delta;
}
