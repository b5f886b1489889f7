import type { Sql } from "../db/database.js";

// BM25 over Postgres full-text search: the tsvector column is the inverted index (GIN), the score is
// computed in SQL from per-term document frequencies, and each hit reports which query words matched.

export interface CandidateScope {
  workspaceId: string;
  /** Any-of; null for every container of the workspace. */
  containers: string[] | null;
  types: string[] | null;
  /** Any-of. */
  tags: string[] | null;
  severities: string[] | null;
  createdAfter: Date | null;
  createdBefore: Date | null;
}

export interface KeywordHit {
  id: string;
  bm25: number;
  /** Query words whose stem the memory contains. */
  words: string[];
}

const k1 = 1.2;
const b = 0.75;

const scopeCondition = `m.workspace_id = $2
  and ($3::text[] is null or m.containers && $3::text[])
  and ($4::text[] is null or m.type = any($4::text[]))
  and ($5::text[] is null or m.tags && $5::text[])
  and ($6::text[] is null or m.severity = any($6::text[]))
  and ($7::timestamptz is null or m.created_at >= $7)
  and ($8::timestamptz is null or m.created_at < $8)`;

const searchSql = `
with terms as (
  -- The same parser and dictionaries as the tsvector column, so "ZX-4711" splits the same way.
  select distinct on (l.lexeme) l.lexeme, lower(d.token) as word
  from ts_debug('english', $1) with ordinality as d, unnest(d.lexemes) as l(lexeme)
  order by l.lexeme, d.ordinality
),
query as materialized (
  select string_agg(quote_literal(lexeme), ' | ')::tsquery as q, array_agg(lexeme) as lexemes from terms
),
-- One pass over the memories in scope that contain a query term (GIN index): each (memory, term) with
-- its term frequency. Document frequencies are counted from these same rows, not by one scan per term.
hits as materialized (
  select m.id, length(m.tsv)::float8 as len, u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 as tf
  from memories m cross join lateral unnest(m.tsv) as u
  where m.tsv @@ (select q from query) and ${scopeCondition}
    and u.lexeme = any((select lexemes from query)::text[])
),
df as (select lexeme, count(*)::float8 as df from hits group by lexeme)
select h.id,
  sum(ln(1 + ($9 - d.df + 0.5) / (d.df + 0.5)) * h.tf * ${k1 + 1}
      / (h.tf + ${k1} * (${1 - b} + ${b} * h.len / $10))) as bm25,
  array_agg(t.word order by t.word) as words
from hits h
join df d on d.lexeme = h.lexeme
join terms t on t.lexeme = h.lexeme
group by h.id
order by bm25 desc, h.id
limit $11`;

const statsSql = `select count(*)::float8 as n, coalesce(avg(length(m.tsv)), 1)::float8 as avgdl
  from memories m where m.workspace_id = $1 and ($2::text[] is null or m.containers && $2::text[])`;

/** Corpus statistics change slowly; recomputing them per query would scan the whole scope. */
const statsTtlMs = 30_000;

export function createKeywordSearch(sql: Sql) {
  const stats = new Map<string, { n: number; avgdl: number; until: number }>();

  async function corpusStats(scope: CandidateScope): Promise<{ n: number; avgdl: number }> {
    const key = `${scope.workspaceId}\u0000${scope.containers?.join("\u0000") ?? "*"}`;
    const cached = stats.get(key);
    if (cached && cached.until > Date.now()) return cached;
    const [row] = await sql.query<{ n: number; avgdl: number }>(statsSql, [scope.workspaceId, scope.containers]);
    const fresh = { n: Math.max(1, row!.n), avgdl: Math.max(1, row!.avgdl), until: Date.now() + statsTtlMs };
    if (stats.size > 10_000) stats.clear();
    stats.set(key, fresh);
    return fresh;
  }

  return async function keywordSearch(query: string, scope: CandidateScope, k: number): Promise<KeywordHit[]> {
    const { n, avgdl } = await corpusStats(scope);
    return sql.query<KeywordHit>(searchSql, [
      query,
      scope.workspaceId,
      scope.containers,
      scope.types,
      scope.tags,
      scope.severities,
      scope.createdAfter,
      scope.createdBefore,
      n,
      avgdl,
      k,
    ]);
  };
}

export type KeywordSearch = ReturnType<typeof createKeywordSearch>;
