import type { Scope } from "../accounts/container-scope.js";
import type { Sql } from "../db/database.js";
import { jsonRows } from "../db/json-rows.js";
import type { MetadataFilter } from "../memories/metadata-filter.js";
import { metadataArraysEqual } from "../memories/memory-list.js";
import { memoryColumns, recordOfJson, visible, type MemoryRecord, type MemoryRow } from "../memories/memory-store.js";

export interface CheckedCandidate {
  memory: MemoryRecord;
  /** Query words whose stem the memory contains. */
  keywordMatches: string[];
  /** Distinct terms of the content (stemmed, without stop words). */
  terms: number;
}

// Postgres is the truth: the index may still hold a memory deleted, changed or moved since it was indexed.
// A metadata filter is checked here too: the index matched the filter's terms (metadata-terms.ts), and
// Postgres' containment decides. Given a keyword query, the same statement reports which query words each
// memory contains, using the parser and dictionaries of the full-text column, so "ZX-4711" splits the same
// way for both; without one (no receipt shows the words) that costs nothing. The candidates are looked up by
// id behind a fence (offset 0) before the metadata filter applies: left to choose, the planner read a filter
// matching a quarter of 100k memories from its GIN index and then kept the few candidates among them
// (30 ms on PGlite, against 1.7 ms by id).
const recheckSql = `
with terms as materialized (
  select distinct on (l.lexeme) l.lexeme, lower(d.token) as word
  from ts_debug('english', $4) with ordinality as d, unnest(d.lexemes) as l(lexeme)
  order by l.lexeme, d.ordinality
)
select ${memoryColumns("m")},
  case when $4::text is null then '{}'::text[]
    else array(select t.word from terms t where t.lexeme = any(tsvector_to_array(m.tsv)) order by t.word) end as keyword_words,
  length(m.tsv) as term_count
from (select * from memories m where m.id = any($1::text[]) and ${visible("m")} offset 0) m
where ($5::jsonb is null or m.metadata @> $5::jsonb)
  and ($6::jsonb is null or ${metadataArraysEqual("m", "$6")})`;

// Every recall runs it, and planning it took longer than running it; its plan (primary-key lookups behind
// the fence) is the same for any values.
const prepared = { prepare: true };

/**
 * The candidates as stored now, limited to what the caller may see and to the metadata filter (null:
 * none); keywordQuery null skips word matching.
 */
export async function recheckCandidates(
  sql: Sql,
  scope: Scope,
  ids: readonly string[],
  keywordQuery: string | null,
  metadata: MetadataFilter | null,
): Promise<CheckedCandidate[]> {
  if (ids.length === 0) return [];
  const rows = await jsonRows<MemoryRow & { keyword_words: string[]; term_count: number }>(sql, recheckSql, [
    ids,
    scope.workspaceId,
    scope.container,
    keywordQuery,
    metadata ? JSON.stringify(metadata.contains) : null,
    metadata && metadata.arrays.length > 0 ? JSON.stringify(metadata.arrays) : null,
  ], "", prepared);
  return rows.map((r) => ({ memory: recordOfJson(r), keywordMatches: r.keyword_words, terms: r.term_count }));
}
