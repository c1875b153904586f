import type { Pool, QueryResult, QueryResultRow } from "pg";

/**
 * Runs the engine's statements. On PostgreSQL they are named prepared statements, which
 * roughly halves the server's CPU per step (the CTEs are costly to plan). PGlite shares one
 * session between all socket connections, where names would collide, so there they are not.
 */
export class Sql {
  /** Statements run since start. */
  statements = 0;
  /** The same, by statement name (benchmarks tell which ones an order costs). */
  readonly statementsByName = new Map<string, number>();

  constructor(
    private readonly pool: Pool,
    private readonly prepared: boolean,
  ) {}

  query<R extends QueryResultRow = QueryResultRow>(
    name: string,
    text: string,
    values: unknown[] = [],
  ): Promise<QueryResult<R>> {
    this.statements++;
    this.statementsByName.set(name, (this.statementsByName.get(name) ?? 0) + 1);
    return this.prepared ? this.pool.query<R>({ name, text, values }) : this.pool.query<R>(text, values);
  }
}
