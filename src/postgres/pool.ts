/**
 * What `postgresJournal()` uses of a node-postgres (`pg`) `Pool`: a `pg.Pool` fits as it is, and
 * the journal never imports `pg` itself (the caller's pool, its version and its TLS settings are
 * the caller's).
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * const pool: PostgresPool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * ```
 */
export interface PostgresPool {
  /** Checks a client out of the pool; the journal releases it when its transaction ends. */
  connect(): Promise<PostgresPoolClient>;
}

/** A client checked out of a {@link PostgresPool} (a `pg.PoolClient`). */
export interface PostgresPoolClient {
  /**
   * Runs one statement with `$1`-style parameters; or, given no `values`, a text of several
   * statements in one round trip (node-postgres's simple query protocol), answered with an array
   * of their results: the journal sends a claim's `BEGIN` with its first statement so.
   */
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
  /** Gives the client back to its pool; with an error, the pool closes it rather than reuse it. */
  release(error?: Error | boolean): void;
  /** node-postgres emits `'error'` on a checked-out client whose connection dies. */
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** Removes a listener added with `on()`. */
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}
