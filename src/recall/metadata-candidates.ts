import type { Scope } from "../accounts/container-scope.js";
import type { Database, Sql } from "../db/database.js";
import { addMetadataConditions, Conditions, scopeConditions, withBitmapScans } from "../memories/memory-list.js";
import type { MetadataFilter } from "../memories/metadata-filter.js";
import type { VectorFilter } from "../search/vector/vector-index.js";
import { firstSearchSize, nextSearchSize, type OverfetchLimits } from "./overfetch.js";

// The vector index has no metadata column. A recall's metadata filter is answered by Postgres (the GIN
// index on metadata): when it matches few memories, their ids prefilter the index searches, so the k
// nearest are all matches; when it matches more, each search over-fetches and its hits are filtered,
// asking again for more until the pool is filled (see overfetch.ts).

/**
 * Most matching ids passed to the index as a prefilter. Above it the filter keeps at least this share of
 * the memories in scope, which bounds the over-fetch (at 100k memories 5,000 ids cost LanceDB 9 to 16 ms
 * a search, an over-fetch of 5,000 hits 10 ms semantic and 67 ms keyword: bench/filtered-search.ts).
 */
export const defaultMetadataPrefilterLimit = 5000;

/** The ids of the memories in scope matching the filters, or null when more than `limit` do. */
export async function metadataPrefilter(
  db: Database,
  scope: Scope,
  filter: VectorFilter,
  metadata: MetadataFilter,
  limit = defaultMetadataPrefilterLimit,
): Promise<string[] | null> {
  const c = scopeConditions(scope);
  if (filter.containers) c.add("m.containers && $::text[]", filter.containers);
  if (filter.types) c.add("m.type = any($::text[])", filter.types);
  if (filter.tags) c.add("m.tags && $::text[]", filter.tags);
  if (filter.severities) c.add("m.severity = any($::text[])", filter.severities);
  if (filter.createdAfter !== undefined) c.add("m.created_at >= $", new Date(filter.createdAfter));
  if (filter.createdBefore !== undefined) c.add("m.created_at < $", new Date(filter.createdBefore));
  addMetadataConditions(c, metadata);
  const last = c.param(limit + 1);
  // Through the GIN index: left to the planner, a filter matching nothing could scan every memory.
  const rows = await withBitmapScans(db, (tx) => tx.query<{ id: string }>(`select m.id from memories m where ${c.where} limit ${last}`, c.params));
  return rows.length > limit ? null : rows.map((r) => r.id);
}

/** The candidates whose metadata matches, in their order. */
export async function keepMetadataMatches(sql: Sql, ids: readonly string[], metadata: MetadataFilter): Promise<string[]> {
  if (ids.length === 0) return [];
  const c = new Conditions().add("m.id = any($::text[])", ids);
  addMetadataConditions(c, metadata);
  const kept = new Set((await sql.query<{ id: string }>(`select m.id from memories m where ${c.where}`, c.params)).map((r) => r.id));
  return ids.filter((id) => kept.has(id));
}

/**
 * The best `pool` hits of a search that pass a filter applied afterwards, in the search's order: the
 * search is run with growing k (overfetch.ts) until that many pass or no more can be found. Each id is
 * checked once, however many rounds return it.
 */
export async function searchMatching<H extends { id: string }>(
  search: (k: number) => Promise<H[]>,
  matching: (ids: string[]) => Promise<string[]>,
  pool: number,
  limits: OverfetchLimits,
): Promise<H[]> {
  const passes = new Map<string, boolean>();
  let k: number | null = firstSearchSize(pool, limits);
  let kept: H[] = [];
  while (k !== null) {
    const hits = await search(k);
    const unseen = hits.filter((h) => !passes.has(h.id)).map((h) => h.id);
    for (const id of unseen) passes.set(id, false);
    for (const id of await matching(unseen)) passes.set(id, true);
    kept = hits.filter((h) => passes.get(h.id));
    k = nextSearchSize(pool, { k, returned: hits.length, kept: kept.length }, limits);
  }
  return kept.slice(0, pool);
}
