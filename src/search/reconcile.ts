import type { Sql } from "../db/database.js";
import { eachTableIdPage, tableHolding } from "../db/table-ids.js";

// Reconciling a search index with its system of record, a page at a time on each side, so memory is
// bounded by a page and no step holds the event loop for long, whatever the collection's size (reading
// both sides whole cost 100+ MB and seconds of event-loop time at 1M memories).

/** Ids compared per step. */
export const reconcilePageSize = 5000;

/** What reconciliation needs from an index (the memories' and the skills' implement it). */
export interface PagedIds {
  /** Calls fn with every id in the index, a page of at most `size` at a time, waiting for each call. */
  eachIdPage(size: number, fn: (ids: string[]) => Promise<void>): Promise<void>;
  /** Those of `ids` the index holds. */
  holding(ids: readonly string[]): Promise<string[]>;
  delete(ids: readonly string[]): Promise<void>;
}

/** The system of record's side: a table of ids and the outbox that queues indexing jobs for them. */
export interface StoredIds {
  table: "memories" | "skills";
  /** Inserts one job per id, e.g. `insert into index_outbox (memory_id) select unnest($1::text[])`. */
  queueSql: string;
}

/**
 * Removes the vectors of ids no longer stored and queues a job for each stored id the index lacks. The
 * index is read before storage in the first pass: whatever a page of the index holds was committed
 * before, so a record created meanwhile is never mistaken for an orphan and loses its vector. In the
 * second pass storage is read first: a record indexed meanwhile is found, and one not yet indexed may be
 * queued twice (harmless).
 */
export async function reconcileInPages(db: Sql, index: PagedIds, stored: StoredIds, pageSize = reconcilePageSize): Promise<{ queued: number; removed: number }> {
  let removed = 0;
  await index.eachIdPage(pageSize, async (ids) => {
    const kept = new Set(await tableHolding(db, stored.table, ids));
    const orphans = ids.filter((id) => !kept.has(id));
    if (orphans.length === 0) return;
    await index.delete(orphans);
    removed += orphans.length;
  });
  let queued = 0;
  await eachTableIdPage(db, stored.table, pageSize, async (ids) => {
    const held = new Set(await index.holding(ids));
    const missing = ids.filter((id) => !held.has(id));
    if (missing.length === 0) return;
    await db.query(stored.queueSql, [missing]);
    queued += missing.length;
  });
  return { queued, removed };
}
