import type pg from "pg";
import { sqlPool, type Database } from "../../db/client";
import { returnColumns, type ReturnRow } from "./rows";

/** What the returns' record modules share: the pool, and one return read whole. */
export interface RecordsContext {
  sql: pg.Pool;
  get(returnId: string): Promise<ReturnRow | null>;
}

export function createRecordsContext(db: Database): RecordsContext {
  const sql = sqlPool(db);
  return {
    sql,
    async get(returnId) {
      const { rows } = await sql.query<ReturnRow>(
        `SELECT ${returnColumns} FROM returns r WHERE r.id = $1::uuid`,
        [returnId],
      );
      return rows[0] ?? null;
    },
  };
}
