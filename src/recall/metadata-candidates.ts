import type { Scope } from "../accounts/container-scope.js";
import type { Database, Sql } from "../db/database.js";
import { addMetadataConditions, Conditions, scopeConditions, withBitmapScans } from "../memories/memory-list.js";
import type { MetadataFilter } from "../memories/metadata-filter.js";
import type { VectorFilter } from "../search/vector/vector-index.js";

// The vector index has no metadata column. A recall's metadata filter is answered by Postgres (the GIN
// index on metadata): when it matches few memories, their ids prefilter the index searches, so the k
// nearest are all matches; when it matches more, it is applied to the candidates the searches found.

/** Most matching ids passed to the index as a prefilter. */
export const metadataPrefilterLimit = 5000;

/** The ids of the memories in scope matching the filters, or null when more than metadataPrefilterLimit do. */
export async function metadataPrefilter(db: Database, scope: Scope, filter: VectorFilter, metadata: MetadataFilter): Promise<string[] | null> {
  const c = scopeConditions(scope);
  if (filter.containers) c.add("m.containers && $::text[]", filter.containers);
  if (filter.types) c.add("m.type = any($::text[])", filter.types);
  if (filter.tags) c.add("m.tags && $::text[]", filter.tags);
  if (filter.severities) c.add("m.severity = any($::text[])", filter.severities);
  if (filter.createdAfter !== undefined) c.add("m.created_at >= $", new Date(filter.createdAfter));
  if (filter.createdBefore !== undefined) c.add("m.created_at < $", new Date(filter.createdBefore));
  addMetadataConditions(c, metadata);
  const limit = c.param(metadataPrefilterLimit + 1);
  // Through the GIN index: left to the planner, a filter matching nothing could scan every memory.
  const rows = await withBitmapScans(db, (tx) => tx.query<{ id: string }>(`select m.id from memories m where ${c.where} limit ${limit}`, c.params));
  return rows.length > metadataPrefilterLimit ? null : rows.map((r) => r.id);
}

/** The candidates whose metadata matches, in their order. */
export async function keepMetadataMatches(sql: Sql, ids: readonly string[], metadata: MetadataFilter): Promise<string[]> {
  if (ids.length === 0) return [];
  const c = new Conditions().add("m.id = any($::text[])", ids);
  addMetadataConditions(c, metadata);
  const kept = new Set((await sql.query<{ id: string }>(`select m.id from memories m where ${c.where}`, c.params)).map((r) => r.id));
  return ids.filter((id) => kept.has(id));
}
