import { toSql } from "pgvector";
import type { Database } from "../../db/database.js";
import { cachedCorpusStats, type CorpusStats } from "../corpus-stats.js";
import { bm25TermSql } from "../scoring.js";
import { pgvectorMaintenance } from "../pgvector-maintenance.js";
import { checkDimensions, lastPerId, vectorOfText } from "../vector/records.js";
import { eachTableIdPage, tableHolding } from "../../db/table-ids.js";
import { skillFilterMatchesNothing, type SkillVectorIndex } from "./skill-vector-index.js";

/** Corpus statistics change slowly; counting a workspace's skills on every search would scan them all. */
const corpusStatsTtlMs = 30_000;

/**
 * The skills collection in PostgreSQL with pgvector: its own table beside memory_vectors_<d>. Keyword
 * search is BM25 over the skills table's full-text column (name and description, GIN index), with this
 * table's filter columns.
 */
export async function openPgvectorSkillIndex(db: Database, dimensions: number): Promise<SkillVectorIndex> {
  const table = `skill_vectors_${dimensions}`;
  await db.transaction(async (tx) => {
    // The same lock as the memories' vector table: schema creation runs once across nodes starting together.
    await tx.query("select pg_advisory_xact_lock($1)", [727_110_002]);
    await tx.query(`create extension if not exists vector`);
    await tx.query(`create table if not exists ${table} (
      id text primary key,
      workspace_id text not null,
      containers text[] not null,
      tags text[] not null,
      maturity text not null,
      state text not null,
      embedding vector(${dimensions}) not null
    )`);
    // Tables made before the marketplace: no skill was public then.
    await tx.query(`alter table ${table} add column if not exists marketplace boolean not null default false`);
    await tx.query(`create index if not exists ${table}_embedding on ${table} using hnsw (embedding vector_cosine_ops)`);
    await tx.query(`create index if not exists ${table}_workspace on ${table} (workspace_id)`);
  });

  // Keyed by workspace id, or "" for the marketplace (every listed skill).
  const corpusStats = cachedCorpusStats(
    corpusStatsTtlMs,
    (workspaceId: string | undefined) => workspaceId ?? "",
    async (workspaceId) =>
      (
        await db.query<CorpusStats>(
          `select count(*)::float8 as n, coalesce(avg(length(s.tsv)), 1)::float8 as avgdl
           from skills s ${workspaceId === undefined ? `join ${table} v on v.id = s.id where v.marketplace` : "where s.workspace_id = $1"}`,
          workspaceId === undefined ? [] : [workspaceId],
        )
      )[0]!,
  );

  const maintenance = pgvectorMaintenance(db, table);

  return {
    kind: "pgvector",

    async upsert(records) {
      if (records.length === 0) return;
      for (const r of records) checkDimensions(r.vector, dimensions);
      const rows = lastPerId(records).map((r) => ({
        id: r.id,
        workspace_id: r.workspaceId,
        containers: r.containers,
        tags: r.tags,
        maturity: r.maturity,
        state: r.state,
        marketplace: r.marketplace,
        embedding: toSql(Array.from(r.vector)),
      }));
      await db.query(
        `insert into ${table} (id, workspace_id, containers, tags, maturity, state, marketplace, embedding)
         select id, workspace_id, containers, tags, maturity, state, marketplace, embedding::vector
         from jsonb_to_recordset($1::jsonb)
           as r(id text, workspace_id text, containers text[], tags text[], maturity text, state text, marketplace boolean, embedding text)
         on conflict (id) do update set workspace_id = excluded.workspace_id, containers = excluded.containers, tags = excluded.tags,
           maturity = excluded.maturity, state = excluded.state, marketplace = excluded.marketplace, embedding = excluded.embedding`,
        [JSON.stringify(rows)],
      );
      maintenance.wrote(rows.length);
    },

    async delete(ids) {
      if (ids.length === 0) return;
      await db.query(`delete from ${table} where id = any($1::text[])`, [ids]);
      maintenance.wrote(ids.length);
    },

    async search(vector, filter, k) {
      checkDimensions(vector, dimensions);
      if (k <= 0 || skillFilterMatchesNothing(filter)) return [];
      return db.transaction(async (tx) => {
        // Iterative scans keep HNSW walking until the filter has let k rows through.
        await tx.query(`select set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', $1, true)`, [
          String(Math.min(1000, Math.max(100, k))),
        ]);
        const rows = await tx.query<{ id: string; similarity: number }>(
          `with hits as materialized (
             select id, embedding <=> $1::vector as distance from ${table}
             where ($2::text is null or workspace_id = $2) and ($8::boolean is null or marketplace = $8)
               and ($3::text[] is null or containers && $3::text[])
               and ($4::text[] is null or tags && $4::text[])
               and ($5::text[] is null or maturity = any($5::text[]))
               and ($6::text[] is null or state = any($6::text[]))
             order by distance limit $7)
           select id, 1 - distance as similarity from hits order by distance`,
          [
            toSql(Array.from(vector)),
            filter.workspaceId,
            filter.containers ?? null,
            filter.tags ?? null,
            filter.maturities ?? null,
            filter.states ?? null,
            k,
            filter.marketplace ?? null,
          ],
        );
        return rows.map((r) => ({ id: r.id, similarity: Number(r.similarity) }));
      });
    },

    async keywordSearch(query, filter, k, withVectors) {
      if (k <= 0 || skillFilterMatchesNothing(filter)) return [];
      const { n, avgdl } = await corpusStats(filter.workspaceId);
      const rows = await db.query<{ id: string; bm25: number; vector: string | null }>(
        `with query as materialized (
           select string_agg(quote_literal(lexeme), ' | ')::tsquery as q, array_agg(lexeme) as lexemes
           from unnest(to_tsvector('english', $1))
         ),
         hits as materialized (
           select s.id, length(s.tsv)::float8 as len, u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 as tf
           from skills s join ${table} v on v.id = s.id cross join lateral unnest(s.tsv) as u
           where s.tsv @@ (select q from query) and ($2::text is null or v.workspace_id = $2) and ($10::boolean is null or v.marketplace = $10)
             and ($3::text[] is null or v.containers && $3::text[])
             and ($4::text[] is null or v.tags && $4::text[])
             and ($5::text[] is null or v.maturity = any($5::text[]))
             and ($6::text[] is null or v.state = any($6::text[]))
             and u.lexeme = any((select lexemes from query)::text[])
         ),
         df as (select lexeme, count(*)::float8 as df from hits group by lexeme),
         best as (
           select h.id, sum(${bm25TermSql({ tf: "h.tf", df: "d.df", n: "$8::float8", length: "h.len", avgdl: "$9::float8" })})::float8 as bm25
           from hits h join df d on d.lexeme = h.lexeme
           group by h.id order by bm25 desc, h.id limit $7)
         select best.id, best.bm25, case when $11::boolean then v.embedding::text end as vector from best join ${table} v on v.id = best.id
         order by best.bm25 desc, best.id`,
        [
          query,
          filter.workspaceId ?? null,
          filter.containers ?? null,
          filter.tags ?? null,
          filter.maturities ?? null,
          filter.states ?? null,
          k,
          n,
          avgdl,
          filter.marketplace ?? null,
          withVectors,
        ],
      );
      return rows.map((r) => ({ id: r.id, bm25: Number(r.bm25), vector: vectorOfText(r.vector) }));
    },

    optimize: maintenance.optimize,

    eachIdPage: (size, fn) => eachTableIdPage(db, table, size, fn),

    holding: (ids) => tableHolding(db, table, ids),

    count: maintenance.count,

    close: async () => undefined,
  };
}
