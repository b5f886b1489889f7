/**
 * Autovacuum's default trigger, for table maintenance whose cost grows with the table (ANALYZE, VACUUM)
 * where no autovacuum runs (PGlite) or runs too seldom: due at the first check, then once the rows
 * written since the last run reach `fraction` of the rows the table held then.
 */
export function maintenanceTrigger(fraction: number) {
  let written = 0;
  let rowsAtLastRun = 0;
  return {
    wrote(rows: number): void {
      written += rows;
    },
    due: (): boolean => written >= fraction * rowsAtLastRun,
    /** Call as the run starts: writes made while it runs count towards the next one. */
    ran(rows: number): void {
      written = 0;
      rowsAtLastRun = rows;
    },
  };
}

/**
 * The pgvector tables' optimize() (memories' and skills') vacuums and analyses a table once this fraction
 * of its rows was written since it last did, not at every fold: on PGlite, which runs no autovacuum, each
 * one held the event loop (10k rows: 21 ms after 250 writes).
 */
export const vacuumEveryFraction = 0.1;
