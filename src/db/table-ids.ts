import type { Sql } from "./database.js";

// A table's ids read in keyset pages and looked up by the page: what reconciling a search index with its
// system of record compares, on either side. `table` is always one of ours, never user input.

/** Calls fn with every id of `table`, in id order, a page of at most `size` at a time, waiting for each call. */
export async function eachTableIdPage(sql: Sql, table: string, size: number, fn: (ids: string[]) => Promise<void>): Promise<void> {
  for (let after: string | null = null; ; ) {
    const ids: string[] = (
      await sql.query<{ id: string }>(`select id from ${table} where ($1::text is null or id > $1::text) order by id limit $2`, [after, size])
    ).map((r) => r.id);
    if (ids.length > 0) await fn(ids);
    if (ids.length < size) return;
    after = ids.at(-1)!;
  }
}

/** Those of `ids` that `table` holds. */
export async function tableHolding(sql: Sql, table: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  return (await sql.query<{ id: string }>(`select id from ${table} where id = any($1::text[])`, [ids])).map((r) => r.id);
}
