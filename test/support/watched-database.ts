import type { Database } from "../../src/db/database.js";

/** `db` with the SQL (and parameters) of every query passed to `seen` before the query runs, unchanged, on `db`. */
export function watchedDatabase<D extends Database>(db: D, seen: (sql: string, params: readonly unknown[]) => void): D {
  const watched = Object.create(db) as D;
  watched.query = ((...args: Parameters<Database["query"]>) => {
    seen(args[0], args[1] ?? []);
    return db.query(...args);
  }) as D["query"];
  return watched;
}
