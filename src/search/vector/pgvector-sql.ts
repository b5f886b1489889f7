import { bm25TermSql } from "../scoring.js";

/**
 * The filter of both searches, with absent optional filters passed as null; each query is planned with
 * its values, so those terms fold away. $1 is the query (vector or text), $12 the limit, $13 the metadata terms.
 */
const filterCondition = (alias: string) => `${alias}workspace_id = $2
  and ($3::text[] is null or ${alias}containers && $3::text[])
  and ($4::text[] is null or ${alias}type = any($4::text[]))
  and ($5::text[] is null or ${alias}tags && $5::text[])
  and ($6::text[] is null or ${alias}severity = any($6::text[]))
  and ($7::float8 is null or ${alias}confidence >= $7::float8)
  and ($8::text[] is null or ${alias}state = any($8::text[]))
  and ($9::bigint is null or ${alias}created_at >= $9::bigint)
  and ($10::bigint is null or ${alias}created_at < $10::bigint)
  and ($11::bigint is null or (${alias}valid_from <= $11::bigint and (${alias}valid_until is null or ${alias}valid_until > $11::bigint)))
  and ($13::text[] is null or ${alias}metadata_terms @> $13::text[])`;

/** Every statement the pgvector index runs, built once per table. Valid on PostgreSQL 15 with pgvector >= 0.8. */
export function pgvectorSql(dimensions: number) {
  const table = `memory_vectors_${dimensions}`;
  const columns = `id, workspace_id, containers, type, tags, severity, confidence, state, valid_from, valid_until, created_at, metadata_terms`;
  const updates = [...columns.split(", ").slice(1), "embedding"].map((c) => `${c} = excluded.${c}`).join(", ");
  return {
    table,
    /** Serialises schema creation across nodes starting at once (the migrations use 727_110_001). */
    lockId: 727_110_002,
    schema: [
      `create extension if not exists vector`,
      `create table if not exists ${table} (
        id text primary key,
        workspace_id text not null,
        containers text[] not null,
        type text not null,
        tags text[] not null,
        severity text,
        confidence double precision not null,
        state text not null,
        valid_from bigint not null,
        valid_until bigint,
        created_at bigint not null,
        embedding vector(${dimensions}) not null
      )`,
      `create index if not exists ${table}_embedding on ${table} using hnsw (embedding vector_cosine_ops)`,
      `create index if not exists ${table}_workspace on ${table} (workspace_id, created_at)`,
      `create index if not exists ${table}_containers on ${table} using gin (containers)`,
      `create index if not exists ${table}_tags on ${table} using gin (tags)`,
      // Null in rows indexed before the column existed, until the backfill at open gives them their terms.
      `alter table ${table} add column if not exists metadata_terms text[]`,
      `create index if not exists ${table}_metadata_terms on ${table} using gin (metadata_terms)`,
      `create index if not exists ${table}_untermed on ${table} (id) where metadata_terms is null`,
    ],
    /** $1: a JSON array of rows; one statement for the whole batch. */
    upsert: `insert into ${table} (${columns}, embedding)
      select ${columns}, embedding::vector
      from jsonb_to_recordset($1::jsonb) as r(
        id text, workspace_id text, containers text[], type text, tags text[], severity text,
        confidence double precision, state text, valid_from bigint, valid_until bigint, created_at bigint,
        metadata_terms text[], embedding text)
      on conflict (id) do update set ${updates}`,
    delete: `delete from ${table} where id = any($1::text[])`,
    /**
     * Iterative scans keep HNSW walking the graph until the filter has let k rows through; relaxed order
     * is re-sorted by the outer query. $1 is the candidate list size.
     */
    searchSettings: `select set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', $1, true)`,
    search: `with hits as materialized (
        select id, embedding <=> $1::vector as distance
        from ${table}
        where ${filterCondition("")}
        order by distance
        limit $12
      )
      select id, 1 - distance as similarity from hits order by distance`,
    /**
     * BM25 over Postgres full-text search: the memories' tsvector column is the inverted index (GIN), and
     * the score is computed from per-term document frequencies counted in the same single pass over the
     * matching rows. $14 and $15 are the corpus size and mean document length (see keywordStats); $16
     * whether to return the hits' vectors (as text: 512 numbers a hit to print and parse).
     */
    keywordSearch: `with query as materialized (
        -- The same parser and dictionaries as the tsvector column, so "ZX-4711" splits the same way.
        select string_agg(quote_literal(lexeme), ' | ')::tsquery as q, array_agg(lexeme) as lexemes
        from unnest(to_tsvector('english', $1))
      ),
      -- One pass over the memories in scope that contain a query term (GIN index): each (memory, term)
      -- with its term frequency. Document frequencies are counted from these same rows.
      hits as materialized (
        select m.id, length(m.tsv)::float8 as len, u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 as tf
        from memories m
        join ${table} v on v.id = m.id
        cross join lateral unnest(m.tsv) as u
        where m.tsv @@ (select q from query) and ${filterCondition("v.")}
          and u.lexeme = any((select lexemes from query)::text[])
      ),
      df as (select lexeme, count(*)::float8 as df from hits group by lexeme),
      scored as (
        select h.id, sum(${bm25TermSql({ tf: "h.tf", df: "d.df", n: "$14", length: "h.len", avgdl: "$15" })}) as bm25
        from hits h join df d on d.lexeme = h.lexeme
        group by h.id
        order by bm25 desc, h.id
        limit $12
      )
      select s.id, s.bm25, case when $16::boolean then v.embedding::text end as vector
      from scored s join ${table} v on v.id = s.id
      order by s.bm25 desc, s.id`,
    /** $1: workspace, $2: containers or null. */
    keywordStats: `select count(*)::float8 as n, coalesce(avg(length(m.tsv)), 1)::float8 as avgdl
      from memories m where m.workspace_id = $1 and ($2::text[] is null or m.containers && $2::text[])`,
    /** search for each vector of $1 (text[] of vector literals), with the same filters: one statement. */
    searchMany: `select q.i - 1 as query, h.id, 1 - h.distance as similarity
      from unnest($1::text[]) with ordinality as q(v, i)
      cross join lateral (
        select id, embedding <=> q.v::vector as distance
        from ${table}
        where ${filterCondition("")}
        order by distance
        limit $12
      ) h
      order by q.i, h.distance`,
    /** $1: the page size. Rows indexed before metadata_terms existed. */
    untermed: `select id from ${table} where metadata_terms is null limit $1`,
    /** $1: a JSON array of {id, terms}. */
    setTerms: `update ${table} v set metadata_terms = r.terms from jsonb_to_recordset($1::jsonb) as r(id text, terms text[]) where v.id = r.id`,
  };
}
