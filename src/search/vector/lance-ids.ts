import type { Table } from "@lancedb/lancedb";
import { idIn } from "./lance-filter.js";

/**
 * Streams the table's ids (one snapshot, read batch by batch with LanceDB's backpressure) to fn in pages
 * of at most `size`, waiting for each call.
 */
export async function eachLanceIdPage(table: Table, size: number, fn: (ids: string[]) => Promise<void>): Promise<void> {
  let page: string[] = [];
  for await (const batch of table.query().select(["id"])) {
    const column = batch.getChild("id");
    if (!column) continue;
    for (const id of column) {
      page.push(id as string);
      if (page.length === size) {
        await fn(page);
        page = [];
      }
    }
  }
  if (page.length > 0) await fn(page);
}

/** Those of `ids` the table holds (looked up in the id index once optimize() has built it). */
export async function lanceHolding(table: Table, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  // A query without matches yields an Arrow table without columns.
  const column = (await table.query().where(idIn(ids)).select(["id"]).toArrow()).getChild("id");
  return column ? Array.from(column, (id) => id as string) : [];
}
