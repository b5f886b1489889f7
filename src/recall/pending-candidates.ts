import type { Scope } from "../accounts/container-scope.js";
import type { Sql } from "../db/database.js";
import { addMetadataConditions, scopeConditions } from "../memories/memory-list.js";
import type { MetadataFilter } from "../memories/metadata-filter.js";
import type { JobVectorReader } from "../memories/job-vectors.js";
import { latestContentJobs } from "../memories/memory-store.js";
import { bm25Term, cosine } from "../search/scoring.js";
import type { KeywordHit, VectorFilter, VectorHit } from "../search/vector/vector-index.js";

// Read-your-writes. A write commits its memory and an indexing job carrying the vector the write path
// computed; the index has the memory only once the indexer has processed the job. Until then recall
// scores the memory from the job: by cosine with the stored vector (brute force) and by BM25 over its
// stored full-text vector, with document frequencies from the workspace's newest memories. The newest
// `pendingScanLimit` content jobs of the workspace are read, so the cost is bounded whatever the backlog;
// older jobs are found once indexed.

/** Content jobs (creates and edits) of a workspace read per recall, newest first. */
export const pendingScanLimit = 1000;

/**
 * The workspace's newest memories in which a keyword recall with pending writes counts its words, for their
 * document frequencies: the whole workspace up to this size, a sample of it beyond.
 */
export const documentFrequencySample = 1000;

export interface PendingRow {
  id: string;
  /** Whether the memory exists and passes the recall's filters and scope. */
  matches: boolean;
  /** The vector of the memory's current version; null when the write could not embed. */
  vector: Float32Array | null;
  /** Length of the memory's full-text vector and the frequencies of the query's lexemes in it. */
  length: number;
  termFrequencies: Record<string, number>;
}

/** The workspace's newest memories (at most documentFrequencySample), as BM25 sees them. */
export interface CorpusSample {
  size: number;
  /** Mean full-text vector length. */
  averageLength: number;
  /** How many of the sampled memories hold each lexeme asked for. */
  documentFrequencies: Record<string, number>;
}

export interface PendingWrites {
  rows: PendingRow[];
  /** Memories stored in the workspace: the corpus size for BM25's inverse document frequency. */
  corpusSize: number;
  /** Null when no pending memory holds a word of the query. */
  sample: CorpusSample | null;
}

/** What a pending read needs beyond the index filter. */
export interface PendingQuery {
  filter: VectorFilter;
  metadata: MetadataFilter | null;
  /** The keyword query; null when the recall does not match words. */
  keywordQuery: string | null;
  /** Whether the recall scores by meaning and so needs the vectors. */
  vectors: boolean;
}

export type PendingReader = (scope: Scope, query: PendingQuery) => Promise<PendingWrites>;

function filterConditions(scope: Scope, { filter, metadata }: PendingQuery) {
  const c = scopeConditions(scope);
  if (filter.containers) c.add("m.containers && $::text[]", filter.containers);
  if (filter.types) c.add("m.type = any($::text[])", filter.types);
  if (filter.tags) c.add("m.tags && $::text[]", filter.tags);
  if (filter.severities) c.add("m.severity = any($::text[])", filter.severities);
  if (filter.states) c.add("m.state = any($::text[])", filter.states);
  if (filter.minConfidence !== undefined) c.add("m.confidence >= $", filter.minConfidence);
  if (filter.createdAfter !== undefined) c.add("m.created_at >= $", new Date(filter.createdAfter));
  if (filter.createdBefore !== undefined) c.add("m.created_at < $", new Date(filter.createdBefore));
  if (filter.validAt !== undefined) c.add("m.valid_from <= $ and (m.valid_until is null or m.valid_until > $)", new Date(filter.validAt));
  if (metadata) addMetadataConditions(c, metadata);
  return c;
}

/**
 * Reads the workspace's newest content jobs with what recall needs to score their memories. The jobs'
 * vectors come from `jobVectors`, which reads each job's once: read with every recall, the 1,000 vectors
 * at the bound held a hybrid recall's pending read at 60 ms p50, against 19 read once (bench/README.md,
 * Read-your-writes).
 */
export function pendingReader(sql: Sql, jobVectors: JobVectorReader): PendingReader {
  return async (scope, query) => {
    // Usually nothing is pending: the partial index answers that for a tenth of the full read's cost,
    // most of which is planning it (2.5 ms on PGlite with an empty outbox).
    const [anyPending] = await sql.query("select 1 from index_outbox where workspace_id = $1 and version is not null limit 1", [scope.workspaceId], {
      prepare: true,
    });
    if (anyPending === undefined) return { rows: [], corpusSize: 0, sample: null };
    const c = filterConditions(scope, query);
    const workspace = c.param(scope.workspaceId);
    const limit = c.param(pendingScanLimit);
    const words = c.param(query.keywordQuery);
    const vectors = c.param(query.vectors);
    // A job's vector is wanted only for a memory that passes the filters, when scored by meaning; term
    // frequencies only for memories that contain a query word.
    const rows = await sql.query<{ id: string; matches: boolean; seq: string | null; length: number | null; tf: Record<string, number> | null; corpus: string | null }>(
      `with recent as materialized (${latestContentJobs(workspace, limit)}),
       query as materialized (
         select coalesce(array_agg(lexeme), '{}') as lexemes,
           coalesce(string_agg(quote_literal(lexeme), ' | '), '')::tsquery as q
         from unnest(to_tsvector('english', coalesce(${words}::text, ''))))
       select r.memory_id as id, f.matches,
         case when f.matches and ${vectors}::boolean and m.version = r.version then r.seq::text end as seq,
         case when f.matches then length(m.tsv) end as length,
         case when f.matches and ${words}::text is not null and m.tsv @@ (select q from query) then (
           select jsonb_object_agg(u.lexeme, coalesce(array_length(u.positions, 1), 1))
           from unnest(m.tsv) as u where u.lexeme = any((select lexemes from query)::text[])) end as tf,
         (select memories_stored from workspace_usage where workspace_id = ${workspace})::text as corpus
       from recent r
       left join memories m on m.id = r.memory_id
       cross join lateral (select coalesce(${c.where}, false) as matches) f`,
      c.params,
    );
    const vectorOf = await jobVectors(rows.map((r) => r.seq));
    // A job gone from the outbox since the statement was indexed meanwhile: its memory is left to the index,
    // which recall searches after this read returns. (Kept, it would drop the index's hit without a vector.)
    const current = rows.filter((r) => r.seq === null || vectorOf.has(r.seq));
    // Only the words pending memories hold are counted, and only when there are such memories.
    const held = new Set<string>();
    for (const r of current) if (r.matches && r.tf) for (const lexeme of Object.keys(r.tf)) held.add(lexeme);
    return {
      rows: current.map((r) => ({
        id: r.id,
        matches: r.matches,
        vector: r.seq === null ? null : vectorOf.get(r.seq)!,
        length: r.length ?? 0,
        termFrequencies: r.tf ?? {},
      })),
      corpusSize: Number(rows[0]?.corpus ?? 0),
      sample: held.size > 0 ? await corpusSample(sql, scope.workspaceId, [...held]) : null,
    };
  };
}

/** The workspace's newest memories, and how many of them hold each of `lexemes`. */
async function corpusSample(sql: Sql, workspaceId: string, lexemes: string[]): Promise<CorpusSample> {
  const [row] = await sql.query<{ size: number; average_length: number; df: Record<string, number> }>(
    `with sample as materialized (select tsv from memories where workspace_id = $1 order by id desc limit $2)
     select count(*)::int as size, coalesce(avg(length(tsv)), 0)::float8 as average_length,
       (select coalesce(jsonb_object_agg(l, (select count(*) from sample d where d.tsv @@ quote_literal(l)::tsquery)), '{}')
        from unnest($3::text[]) as l) as df
     from sample`,
    [workspaceId, documentFrequencySample, lexemes],
  );
  return { size: row!.size, averageLength: row!.average_length, documentFrequencies: row!.df };
}

/**
 * BM25 of the pending memories that contain a query lexeme, on the scale of the index's scores: document
 * frequencies and mean length from the sample of the workspace's newest memories, scaled to the workspace's
 * size (exact up to the sample's size). Counted among the pending memories alone, a word common in the
 * workspace weighed as a rare one: one fresh memory saying "the user mentioned …" came among the first five
 * for 56 of 159 agent-facts questions in keyword mode, against 3 once indexed (`bench/pending-ranking.ts`).
 */
export function pendingBm25(pending: PendingWrites): Map<string, number> {
  const rows = pending.rows.filter((r) => r.matches);
  const scores = new Map<string, number>();
  if (rows.length === 0) return scores;
  const sample = pending.sample?.size ? pending.sample : null;
  const n = Math.max(pending.corpusSize, rows.length, sample?.size ?? 0);
  const avgdl = Math.max(1, sample ? sample.averageLength : rows.reduce((sum, r) => sum + r.length, 0) / rows.length);
  const df = new Map<string, number>();
  for (const r of rows) for (const lexeme of Object.keys(r.termFrequencies)) df.set(lexeme, (df.get(lexeme) ?? 0) + 1);
  if (sample) {
    for (const [lexeme, d] of df) df.set(lexeme, Math.max(d, ((sample.documentFrequencies[lexeme] ?? 0) * n) / sample.size));
  }
  for (const r of rows) {
    let score = 0;
    for (const [lexeme, tf] of Object.entries(r.termFrequencies)) score += bm25Term(tf, df.get(lexeme)!, n, r.length, avgdl);
    if (score > 0) scores.set(r.id, score);
  }
  return scores;
}

/**
 * The index's hits with the pending memories in their place: an index hit for a memory with a pending
 * write scored its previous version (or state), so it is dropped; the pending memories that pass the
 * filters are scored from their job and ranked in, each list cut to k again.
 */
export function withPending(
  indexed: { semantic: VectorHit[]; keyword: KeywordHit[] },
  pending: PendingWrites | null,
  queryVector: Float32Array | undefined,
  k: number,
): { semantic: VectorHit[]; keyword: KeywordHit[] } {
  if (!pending || pending.rows.length === 0) return indexed;
  const stale = new Set(pending.rows.map((r) => r.id));
  const matching = pending.rows.filter((r) => r.matches);
  const semantic = indexed.semantic.filter((h) => !stale.has(h.id));
  if (queryVector) {
    for (const r of matching) {
      if (r.vector && r.vector.length === queryVector.length) semantic.push({ id: r.id, similarity: cosine(queryVector, r.vector) });
    }
  }
  const keyword = indexed.keyword.filter((h) => !stale.has(h.id));
  const bm25 = pendingBm25(pending);
  for (const r of matching) {
    const score = bm25.get(r.id);
    if (score !== undefined) keyword.push({ id: r.id, bm25: score, vector: r.vector && r.vector.length === queryVector?.length ? r.vector : null });
  }
  return {
    semantic: semantic.sort((x, y) => y.similarity - x.similarity).slice(0, k),
    keyword: keyword.sort((x, y) => y.bm25 - x.bm25).slice(0, k),
  };
}
