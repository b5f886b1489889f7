/** Every statement the pgvector index runs, built once per table. Valid on PostgreSQL 15 with pgvector >= 0.8. */
export function pgvectorSql(dimensions: number) {
  const table = `memory_vectors_${dimensions}`;
  const columns = `id, workspace_id, containers, type, tags, severity, confidence, state, valid_from, valid_until, created_at`;
  // Absent optional filters are passed as null; each query is planned with its values, so those terms fold away.
  const filters = `workspace_id = $2
          and ($3::text[] is null or containers && $3::text[])
          and ($4::text[] is null or type = any($4::text[]))
          and ($5::text[] is null or tags && $5::text[])
          and ($6::text[] is null or severity = any($6::text[]))
          and ($7::float8 is null or confidence >= $7::float8)
          and ($8::text[] is null or state = any($8::text[]))
          and ($9::bigint is null or created_at >= $9::bigint)
          and ($10::bigint is null or created_at < $10::bigint)
          and ($11::bigint is null or (valid_from <= $11::bigint and (valid_until is null or valid_until > $11::bigint)))
          and ($12::text[] is null or id = any($12::text[]))`;
  const updates = [...columns.split(", ").slice(1), "embedding"].map((c) => `${c} = excluded.${c}`).join(", ");
  return {
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
    ],
    /** $1: a JSON array of rows; one statement for the whole batch. */
    upsert: `insert into ${table} (${columns}, embedding)
      select ${columns}, embedding::vector
      from jsonb_to_recordset($1::jsonb) as r(
        id text, workspace_id text, containers text[], type text, tags text[], severity text,
        confidence double precision, state text, valid_from bigint, valid_until bigint, created_at bigint,
        embedding text)
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
        where ${filters}
        order by distance
        limit $13
      )
      select id, 1 - distance as similarity from hits order by distance`,
    /** search for each vector of $1 (text[] of vector literals), with the same filters: one statement. */
    searchMany: `select q.i - 1 as query, h.id, 1 - h.distance as similarity
      from unnest($1::text[]) with ordinality as q(v, i)
      cross join lateral (
        select id, embedding <=> q.v::vector as distance
        from ${table}
        where ${filters}
        order by distance
        limit $13
      ) h
      order by q.i, h.distance`,
    count: `select count(*)::int as n from ${table}`,
    ids: `select id from ${table}`,
    /** Cleans dead index entries left by updates and deletes, and refreshes the statistics the planner uses to choose between HNSW and the filter indexes. */
    optimize: `vacuum (analyze) ${table}`,
  };
}
