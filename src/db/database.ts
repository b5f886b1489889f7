/** The one storage interface: parameterised SQL on PostgreSQL, embedded (PGlite) or a server (pg). */
export interface Sql {
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<Row[]>;
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
  /** Loads pgvector into PGlite (a server must have it installed). */
  vector?: boolean;
  /** PGlite's shared_buffers (a server sets its own). */
  pgliteSharedBuffersBytes?: number;
}

/** Opens the configured backend: a Postgres server when a URL is given, otherwise PGlite in dataDir. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const { openPostgres } = await import("./postgres.js");
    return openPostgres(options.databaseUrl, options.poolSize);
  }
  const { openPglite } = await import("./pglite.js");
  return openPglite(options.dataDir, { vector: options.vector ?? false, sharedBuffersBytes: options.pgliteSharedBuffersBytes });
}
