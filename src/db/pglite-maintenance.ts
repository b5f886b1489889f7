import type { Sql } from "./database.js";

// PGlite runs no autovacuum: its tables are never analysed, so the planner keeps planning for empty
// tables (a 20-row marketplace page joined and sorted all 10,000 listings: 27 ms instead of 1.4 ms), and
// dead rows of churning tables (the outboxes) are never reclaimed. This stands in for it on the trigger
// a server's autovacuum would use most: a table that grew by a fifth since it was last vacuumed.
const growthFactor = 1.2;
const minGrowthPages = 8;

/** Vacuums and analyses every table of the schema that grew past the trigger; answers their names. */
export async function vacuumGrownTables(sql: Sql): Promise<string[]> {
  const grown = await sql.query<{ name: string }>(
    `select format('%I.%I', n.nspname, c.relname) as name
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind = 'r' and n.nspname = current_schema()
        and pg_relation_size(c.oid) / current_setting('block_size')::int > c.relpages * $1::float8 + $2::int`,
    [growthFactor, minGrowthPages],
  );
  // The names come from the catalog, quoted by format('%I'): identifiers cannot be parameters.
  for (const { name } of grown) await sql.query(`vacuum (analyze) ${name}`);
  return grown.map((t) => t.name);
}
