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
