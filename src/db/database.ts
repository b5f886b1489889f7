export interface QueryOptions {
  /**
   * Keeps the statement prepared on each server connection that runs it, so it is parsed and planned
   * once per connection, not per call: recall's re-check took longer to plan (0.8 to 1.0 ms) than to run.
   * For hot statements whose text is fixed and whose best plan does not depend on the values (after five
   * runs PostgreSQL may switch to one generic plan). PGlite plans every call; DATABASE_PREPARED_STATEMENTS
   * =false turns it off for poolers that cannot keep prepared statements.
   */
  prepare?: boolean;
}

/** The one storage interface: parameterised SQL on PostgreSQL, embedded (PGlite) or a server (pg). */
export interface Sql {
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<Row[]>;
}

export interface Database extends Sql {
  /** Runs fn in one transaction; rolls back if it throws. */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  /** A cheap round-trip used by readiness checks. */
  ping(): Promise<void>;
  /** Housekeeping a server's autovacuum does itself: a no-op there; on PGlite, vacuums grown tables. */
  maintain(): Promise<void>;
  close(): Promise<void>;
  readonly kind: "pglite" | "postgres";
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize: number;
  /** Named prepared statements for queries that ask for them (QueryOptions.prepare); default true. */
  preparedStatements?: boolean;
  /** Loads pgvector into PGlite (a server must have it installed). */
  vector?: boolean;
  /** PGlite's shared_buffers (a server sets its own). */
  pgliteSharedBuffersBytes?: number;
}

/** Opens the configured backend: a Postgres server when a URL is given, otherwise PGlite in dataDir. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const { openPostgres } = await import("./postgres.js");
    return openPostgres(options.databaseUrl, options.poolSize, options.preparedStatements);
  }
  const { openPglite } = await import("./pglite.js");
  return openPglite(options.dataDir, { vector: options.vector ?? false, sharedBuffersBytes: options.pgliteSharedBuffersBytes });
}
