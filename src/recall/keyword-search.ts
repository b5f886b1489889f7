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
-- Materialized: inlined, the planner re-runs these counts for every (matched row, term) pair.
df as materialized (
  select t.lexeme, t.word,
    (select count(*) from memories m where m.tsv @@ quote_literal(t.lexeme)::tsquery and ${scopeCondition})::float8 as df
  from terms t
),
matched as (
  select m.id, m.tsv from memories m
  where m.tsv @@ (select string_agg(quote_literal(lexeme), ' | ')::tsquery from terms) and ${scopeCondition}
)
select mt.id,
  sum(ln(1 + ($9 - d.df + 0.5) / (d.df + 0.5)) * f.tf * ${k1 + 1}
      / (f.tf + ${k1} * (${1 - b} + ${b} * length(mt.tsv) / $10))) as bm25,
  array_agg(d.word order by d.word) as words
from matched mt
cross join lateral unnest(mt.tsv) as u
join df d on d.lexeme = u.lexeme
cross join lateral (select coalesce(array_length(u.positions, 1), 1)::float8 as tf) f
group by mt.id
order by bm25 desc, mt.id
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
