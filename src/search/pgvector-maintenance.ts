import type { Database } from "../db/database.js";
import { maintenanceTrigger } from "./maintenance-trigger.js";

/**
 * Vacuum cleans the dead HNSW entries that updates and deletes leave; analyse refreshes the statistics
 * the planner uses to choose between HNSW and the filter indexes. A pgvector table's optimize() (the
 * memories' and the skills') does both once this fraction of its rows was written since it last did, not
 * at every fold: on PGlite, which runs no autovacuum, each one held the event loop (10k rows: 21 ms after
 * 250 writes).
 */
const vacuumEveryFraction = 0.1;

/** Row count and vacuum of one of our pgvector tables; `table` is never user input. */
export function pgvectorMaintenance(db: Database, table: string) {
  const vacuum = maintenanceTrigger(vacuumEveryFraction);
  const count = async () => (await db.query<{ n: number }>(`select count(*)::int as n from ${table}`))[0]?.n ?? 0;
  return {
    count,
    /** Upserts, rewrites and deletes all count. */
    wrote: vacuum.wrote,
    async optimize(): Promise<void> {
      if (!vacuum.due()) return;
      vacuum.ran(await count());
      await db.query(`vacuum (analyze) ${table}`);
    },
  };
}
