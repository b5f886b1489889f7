import { toSql } from "pgvector";
import type { Database } from "../../db/database.js";
import { eachTableIdPage, tableHolding } from "../../db/table-ids.js";
import { pgvectorSql } from "./pgvector-sql.js";
import { cachedCorpusStats, type CorpusStats } from "../corpus-stats.js";
import { pgvectorMaintenance } from "../pgvector-maintenance.js";
import { backfillMetadataTerms, checkDimensions, lastPerId, matchesNothing, vectorOfText, type MetadataTermsOf } from "./records.js";
import type { VectorFilter, VectorHit, VectorIndex } from "./vector-index.js";

/** pgvector's HNSW index accepts at most 2,000 dimensions for the vector type. */
const maxHnswDimensions = 2000;
/** HNSW candidate list size, raised to k (pgvector allows up to 1,000; iterative scans go on past it). */
const efSearch = (k: number) => String(Math.min(1000, Math.max(100, k)));

/** Corpus statistics change slowly; recomputing them per query would scan the whole scope. */
const keywordStatsTtlMs = 30_000;

/** Nulls stand for absent filters (see the search SQL). */
const millisOrNull = (value: number | undefined) => (value === undefined ? null : Math.trunc(value));

function searchParams(query: unknown, filter: VectorFilter, k: number): unknown[] {
  return [
    query,
    filter.workspaceId,
    filter.containers ?? null,
    filter.types ?? null,
    filter.tags ?? null,
    filter.severities ?? null,
    filter.minConfidence ?? null,
    filter.states ?? null,
    millisOrNull(filter.createdAfter),
    millisOrNull(filter.createdBefore),
    millisOrNull(filter.validAt),
    k,
    filter.metadataTerms?.length ? filter.metadataTerms : null,
  ];
}

/**
 * The vector index in PostgreSQL with pgvector, next to the system of record. The Database belongs to
 * the caller: close() leaves it open. On PGlite the database must be opened with the vector extension.
 */
export async function openPgvectorIndex(db: Database, dimensions: number, metadataTermsOf?: MetadataTermsOf): Promise<VectorIndex> {
  if (dimensions > maxHnswDimensions) {
    throw new RangeError(`pgvector HNSW indexes take at most ${maxHnswDimensions} dimensions, got ${dimensions}`);
  }
  const sql = pgvectorSql(dimensions);
  await db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock($1)", [sql.lockId]);
    for (const statement of sql.schema) await tx.query(statement);
  });
  if (metadataTermsOf) {
    await backfillMetadataTerms(
      metadataTermsOf,
      async (limit) => (await db.query<{ id: string }>(sql.untermed, [limit])).map((r) => r.id),
      (rows) => db.query(sql.setTerms, [JSON.stringify(rows)]).then(() => undefined),
    );
  }

  const corpusStats = cachedCorpusStats(
    keywordStatsTtlMs,
    (filter: VectorFilter) => `${filter.workspaceId}\u0000${filter.containers?.join("\u0000") ?? "*"}`,
    async (filter) => (await db.query<CorpusStats>(sql.keywordStats, [filter.workspaceId, filter.containers ?? null]))[0]!,
  );
  const maintenance = pgvectorMaintenance(db, sql.table);

  return {
    kind: "pgvector",

    async upsert(records) {
      if (records.length === 0) return;
      for (const r of records) checkDimensions(r.vector, dimensions);
      const rows = lastPerId(records).map((r) => ({
        id: r.id,
        workspace_id: r.workspaceId,
        containers: r.containers,
        type: r.type,
        tags: r.tags,
        severity: r.severity,
        confidence: r.confidence,
        state: r.state,
        valid_from: Math.trunc(r.validFrom),
        valid_until: r.validUntil === null ? null : Math.trunc(r.validUntil),
        created_at: Math.trunc(r.createdAt),
        metadata_terms: r.metadataTerms,
        embedding: toSql(Array.from(r.vector)),
      }));
      await db.query(sql.upsert, [JSON.stringify(rows)]);
      maintenance.wrote(rows.length);
    },

    async delete(ids) {
      if (ids.length === 0) return;
      await db.query(sql.delete, [ids]);
      maintenance.wrote(ids.length);
    },

    async search(vector, filter, k) {
      checkDimensions(vector, dimensions);
      if (k <= 0 || matchesNothing(filter)) return [];
      return db.transaction(async (tx) => {
        await tx.query(sql.searchSettings, [efSearch(k)]);
        const rows = await tx.query<{ id: string; similarity: number }>(sql.search, searchParams(toSql(Array.from(vector)), filter, k));
        return rows.map((r) => ({ id: r.id, similarity: Number(r.similarity) }));
      });
    },

    async keywordSearch(query, filter, k, withVectors) {
      if (k <= 0 || matchesNothing(filter)) return [];
      const { n, avgdl } = await corpusStats(filter);
      const rows = await db.query<{ id: string; bm25: number; vector: string | null }>(sql.keywordSearch, [...searchParams(query, filter, k), n, avgdl, withVectors]);
      return rows.map((r) => ({ id: r.id, bm25: Number(r.bm25), vector: vectorOfText(r.vector) }));
    },

    async searchMany(vectors, filter, k) {
      for (const v of vectors) checkDimensions(v, dimensions);
      const hits: VectorHit[][] = vectors.map(() => []);
      if (vectors.length === 0 || k <= 0 || matchesNothing(filter)) return hits;
      const literals = vectors.map((v) => toSql(Array.from(v)) as string);
      const rows = await db.transaction(async (tx) => {
        await tx.query(sql.searchSettings, [efSearch(k)]);
        return tx.query<{ query: number; id: string; similarity: number }>(sql.searchMany, searchParams(literals, filter, k));
      });
      for (const r of rows) hits[Number(r.query)]!.push({ id: r.id, similarity: Number(r.similarity) });
      return hits;
    },

    optimize: maintenance.optimize,

    eachIdPage: (size, fn) => eachTableIdPage(db, sql.table, size, fn),

    holding: (ids) => tableHolding(db, sql.table, ids),

    count: maintenance.count,

    close: async () => undefined,
  };
}
