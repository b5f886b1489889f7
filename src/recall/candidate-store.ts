import type { JsonObject } from "@bufbuild/protobuf";
import type { Scope } from "../accounts/container-scope.js";
import type { Sql } from "../db/database.js";
import type { MetadataFilter } from "../memories/metadata-filter.js";
import { metadataArraysEqual } from "../memories/memory-list.js";
import { visible, type MemoryRecord } from "../memories/memory-store.js";

/** What recall reads of a memory: the fields it filters, scores and returns. */
export type RecalledMemory = Pick<
  MemoryRecord,
  | "id"
  | "workspaceId"
  | "content"
  | "type"
  | "containers"
  | "tags"
  | "validFrom"
  | "validUntil"
  | "metadata"
  | "confidence"
  | "severity"
  | "state"
  | "supersededBy"
  | "createdAt"
  | "contentTokens"
>;

export interface CheckedCandidate {
  memory: RecalledMemory;
  /** Query words whose stem the memory contains; listed only when asked for (receipts). */
  keywordMatches: string[];
  /** Distinct terms of the content (stemmed, without stop words). */
  terms: number;
  /** Distinct terms of the keyword query, and how many of them the content holds; 0 without a keyword query. */
  queryTerms: number;
  matchedTerms: number;
}

/** The keyword query whose terms are matched against each candidate; `words` lists the matched words too. */
export interface TermMatching {
  query: string;
  words: boolean;
}

/** One re-checked candidate as the statement returns it: a JSON array, in the order of `recheckSql`'s columns. */
type CandidateRow = [
  id: string,
  workspaceId: string,
  content: string,
  type: string,
  containers: string[],
  tags: string[],
  validFrom: string,
  validUntil: string | null,
  metadata: JsonObject,
  confidence: number,
  severity: string | null,
  state: string,
  supersededBy: string | null,
  createdAt: string,
  contentTokens: number | null,
  keywordMatches: string[],
  terms: number,
  queryTerms: number,
  matchedTerms: number,
];

const candidateOf = (r: CandidateRow): CheckedCandidate => ({
  memory: {
    id: r[0],
    workspaceId: r[1],
    content: r[2],
    type: r[3],
    containers: r[4],
    tags: r[5],
    validFrom: new Date(r[6]),
    validUntil: r[7] === null ? null : new Date(r[7]),
    metadata: r[8],
    confidence: r[9],
    severity: r[10],
    state: r[11],
    supersededBy: r[12],
    createdAt: new Date(r[13]),
    contentTokens: r[14],
  },
  keywordMatches: r[15],
  terms: r[16],
  queryTerms: r[17],
  matchedTerms: r[18],
});

// Postgres is the truth: the index may still hold a memory deleted, changed or moved since it was indexed.
// A metadata filter is checked here too: the index matched the filter's terms (metadata-terms.ts), and
// Postgres' containment decides. Given a keyword query, the same statement counts the query's terms and
// those each memory holds (hybrid scoring weighs the keyword evidence by that share) and, for receipts,
// lists the query words each memory contains, using the parser and dictionaries of the full-text column,
// so "ZX-4711" splits the same way for both; without one (semantic recall) that costs nothing. A memory
// holds |q| + |m| - |q ∪ m| of the query's terms, the union being the two tsvectors concatenated (which
// merges equal lexemes): on PGlite, 80 candidates, 0.15 ms against 0.7 ms for matching each term as the
// word list does. The candidates are looked up by id behind a fence (offset 0) before the metadata filter
// applies: left to choose, the planner read a filter matching a quarter of 100k memories from its GIN index
// and then kept the few candidates among them (30 ms on PGlite, against 1.7 ms by id).
// Every recall runs it, so it reads only the columns recall uses, each row as one JSON array, the whole
// result as one text parsed by JSON.parse (see json-rows.ts): against all of a memory's columns as JSON
// objects, about 0.3 ms less CPU for 80 candidates on a PostgreSQL server (its share and ours together).
const recheckSql = `
with terms as materialized (
  select distinct on (l.lexeme) l.lexeme, lower(d.token) as word
  from ts_debug('english', $4) with ordinality as d, unnest(d.lexemes) as l(lexeme)
  order by l.lexeme, d.ordinality
), query as materialized (select to_tsvector('english', coalesce($4, '')) as tsv)
select coalesce(json_agg(json_build_array(
  m.id, m.workspace_id, m.content, m.type, m.containers, m.tags, m.valid_from, m.valid_until, m.metadata, m.confidence,
  m.severity, m.state, m.superseded_by, m.created_at, m.content_tokens,
  case when not $7::boolean then '{}'::text[]
    else array(select t.word from terms t where t.lexeme = any(tsvector_to_array(m.tsv)) order by t.word) end,
  length(m.tsv), length(q.tsv), length(q.tsv) + length(m.tsv) - length(q.tsv || m.tsv))), '[]')::text as rows
from (select * from memories m where m.id = any($1::text[]) and ${visible("m")} offset 0) m, query q
where ($5::jsonb is null or m.metadata @> $5::jsonb)
  and ($6::jsonb is null or ${metadataArraysEqual("m", "$6")})`;

// Planning it took longer than running it; its plan (primary-key lookups behind the fence) is the same for any values.
const prepared = { prepare: true };

/**
 * The candidates as stored now, limited to what the caller may see and to the metadata filter (null:
 * none); keyword null skips term matching (no words, no terms counted).
 */
export async function recheckCandidates(
  sql: Sql,
  scope: Scope,
  ids: readonly string[],
  keyword: TermMatching | null,
  metadata: MetadataFilter | null,
): Promise<CheckedCandidate[]> {
  if (ids.length === 0) return [];
  const [result] = await sql.query<{ rows: string }>(
    recheckSql,
    [
      ids,
      scope.workspaceId,
      scope.container,
      keyword?.query ?? null,
      metadata ? JSON.stringify(metadata.contains) : null,
      metadata && metadata.arrays.length > 0 ? JSON.stringify(metadata.arrays) : null,
      keyword?.words ?? false,
    ],
    prepared,
  );
  return (JSON.parse(result!.rows) as CandidateRow[]).map(candidateOf);
}
