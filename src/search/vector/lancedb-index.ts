import { Index, MatchQuery, type Query, type Table, type VectorQuery } from "@lancedb/lancedb";
import { lanceAnalyser } from "../analyser.js";
import { inFlightGate } from "../../in-flight-gate.js";
import { idIn, lanceWhere, withWhere, type LanceWhere } from "./lance-filter.js";
import { eachLanceIdPage, lanceHolding } from "./lance-ids.js";
import { lanceSchema, metadataTermsColumn, metadataTermsTable, toArrowTable } from "./lance-records.js";
import { isRetryableConflict, retryConflicts, type RetryPolicy } from "./lance-retry.js";
import { lanceRowCache, type LanceRowCache } from "./lance-row-cache.js";
import { lanceIndexWork } from "./lance-scratch.js";
import { connectLance, type LanceConnectionOptions } from "./lance-session.js";
import { backfillMetadataTerms, checkDimensions, lastPerId, matchesNothing, type MetadataTermsOf } from "./records.js";
import { serialQueue, type SerialQueue } from "./serial.js";
import { selectiveFilters } from "./selective-filters.js";
import type { KeywordHit, VectorFilter, VectorHit, VectorIndex } from "./vector-index.js";

export interface LanceIndexOptions extends LanceConnectionOptions {
  dimensions: number;
  /** Rows at which optimize() builds the ANN index; below it an exact scan is fast enough. */
  annThreshold?: number;
  /** Bytes of vectors from which the index is quantized (IVF_RQ); default defaultQuantizeFromBytes. */
  quantizeFromBytes?: number;
  /** How often the handle reads the IVF index's kind and partitions again; default defaultAnnRefreshMs. */
  annRefreshMs?: number;
  /**
   * For rows indexed before the table had a metadata_terms column (see backfillMetadataTerms); without
   * it such rows keep null terms and match no metadata filter.
   */
  metadataTermsOf?: MetadataTermsOf;
}

/**
 * Rows from which a collection is searched through its IVF index (then exactly where that finds too
 * few). The exact scan reads every row's vector from the table's fragments: 2,000 memories cost 37 ms of
 * LanceDB CPU a semantic recall, and a contradiction search of ten vectors at 3,000 rows 200 to 300 ms;
 * through the index, whose vectors lie together in its own file, the same recall costs 6.6 ms.
 */
export const defaultAnnThreshold = 1_024;

/** LanceDB's default number of partitions a search probes (the least an IVF_FLAT search probes). */
const defaultProbes = 20;
/**
 * Rows a search through the index probes at least. Probing is cheap beside the exact scan (10k rows: all 67
 * partitions 6.7 ms of CPU, 20 of them 5.3 ms, the exact scan 20 to 30 ms), so up to about this many rows
 * the index probes every partition and answers exactly; `npx tsx bench/ann-agreement.ts` measures the rest.
 */
const probedRows = 4_096;

/**
 * Partitions to probe in an index of `partitions` over `rows` rows: enough to hold probedRows rows, and
 * never fewer than `minProbes` (the index kind's). (A table grows to four times the rows its index was
 * trained on before it is retrained, so the rows a partition holds are counted, not assumed.)
 */
export const probesFor = (partitions: number, rows: number, minProbes = defaultProbes): number =>
  Math.min(partitions, Math.max(minProbes, Math.ceil((probedRows * partitions) / Math.max(rows, 1))));
/**
 * Versions older than this are pruned by optimize(); readers move to the latest within their consistency
 * interval. Every indexed batch makes a version: kept for an hour, 100k memories left 8 GB of them.
 */
export const versionRetentionMs = 2 * 60_000;

/**
 * Filter columns and their scalar index kinds: bitmaps for low-cardinality strings, label lists for string
 * lists, B-trees for lookups and ranges. created_at's B-tree answers a recall's time window from the index:
 * without it a 30-day window over 300k memories added 2 to 3 ms to each search (in process, none with it),
 * and a hybrid recall at 1M with the window was 1.78x slower at p50 than without (1.41x with the B-tree).
 */
const scalarIndexes: ReadonlyArray<readonly [string, () => Index]> = [
  ["id", Index.btree], // merge-insert joins and deletes look rows up by id
  ["created_at", Index.btree],
  ["workspace_id", Index.bitmap],
  ["type", Index.bitmap],
  ["state", Index.bitmap],
  ["severity", Index.bitmap],
  ["containers", Index.labelList],
  ["tags", Index.labelList],
  [metadataTermsColumn, Index.labelList],
];

/**
 * LanceDB's default of sqrt(rows) partitions keeps each probe small (100k rows: 316 partitions, queries p50
 * 6 ms against 12 ms with 57); the count is kept in the index name so optimize() retrains once the table
 * has grown enough to want twice as many.
 */
const maxPartitions = 1024;
const partitionsFor = (rows: number) => Math.min(maxPartitions, Math.max(16, Math.round(Math.sqrt(rows))));

/**
 * The two IVF index kinds. IVF_FLAT keeps every vector in the index: searches read nothing else, and while
 * the index fits LanceDB's index cache they are the fastest (100k memories: 6.8 ms p50 in process). It
 * does not fit at scale: 2 GB at 1M memories of 512 dimensions, so a 512 MiB cache missed most partitions
 * a search probed (p50 28 ms, p95 149 ms). IVF_RQ keeps one bit per dimension (RaBitQ; 100k memories:
 * 8.3 MB against 197 MB) and re-ranks the refineFactor × k nearest by those bits with the exact vectors
 * read from the table, which costs 5 to 10 ms more a search. Those reads cost more than the bits: twice
 * LanceDB's probes re-ranking 5 × k instead of 10 × k was faster and nearer the exact scan (hashed
 * vectors, k = 40: 1M p50 8.6 against 10.7 ms, top-10 agreement 0.93 against 0.87; 300k 6.9 against
 * 8.8 ms, 0.94 against 0.90). `npx tsx bench/ann-agreement.ts` measures both kinds on the model's vectors.
 */
const annKinds = {
  flat: { prefix: "vector_ivf_flat_p", minProbes: defaultProbes, refineFactor: 0, config: (partitions: number) => Index.ivfFlat({ distanceType: "cosine", numPartitions: partitions }) },
  rq: { prefix: "vector_ivf_rq_p", minProbes: 2 * defaultProbes, refineFactor: 5, config: (partitions: number) => Index.ivfRq({ distanceType: "cosine", numPartitions: partitions }) },
} as const;
type AnnKind = keyof typeof annKinds;
const annKindNames = Object.keys(annKinds) as AnnKind[];

/**
 * Bytes of vectors (rows × dimensions × 4) from which a collection's index is IVF_RQ: 131,072 memories of
 * 512 dimensions, 43,690 of 1,536. Below it an IVF_FLAT index's working set fits the default index cache
 * (LANCEDB_INDEX_CACHE_BYTES, 384 MiB): at 130k memories the recall phases filled 291 MB of an uncapped one.
 */
export const defaultQuantizeFromBytes = 256 * 2 ** 20;

interface AnnIndex {
  name: string;
  kind: AnnKind;
  partitions: number;
}

/** The table's IVF index, or undefined when it has none yet. */
async function annIndexOf(table: Table): Promise<AnnIndex | undefined> {
  for (const { name } of await table.listIndices()) {
    const kind = annKindNames.find((k) => name.startsWith(annKinds[k].prefix));
    if (kind) return { name, kind, partitions: Number(name.slice(annKinds[kind].prefix.length)) };
  }
  return undefined;
}

/** How often a handle reads its table's IVF index again, to follow rebuilds made by another node. */
export const defaultAnnRefreshMs = 30_000;

/**
 * How a collection's searches use its IVF index: the kind and probes of the index the table had when
 * this handle last read it: at open, after its own optimize, and every `refreshEveryMs`, so a node that
 * does not maintain the index follows the maintainer's rebuilds (an IVF_RQ index searched without
 * re-ranking returns estimated similarities).
 */
export async function annSearch(table: Table, refreshEveryMs = defaultAnnRefreshMs) {
  let probes = 0;
  let refineFactor = 0;
  // Probes cover every partition of an IVF_FLAT index: searches through it are exact.
  let everyPartition = false;
  const refresh = async () => {
    const index = await annIndexOf(table);
    probes = index ? probesFor(index.partitions, await table.countRows(), annKinds[index.kind].minProbes) : 0;
    refineFactor = index ? annKinds[index.kind].refineFactor : 0;
    everyPartition = index !== undefined && index.kind === "flat" && probes >= index.partitions;
  };
  await refresh();
  const selective = selectiveFilters();
  // A failed refresh keeps what the last one read; the next tick tries again.
  const timer = setInterval(() => refresh().catch(() => undefined), refreshEveryMs);
  timer.unref();
  return {
    refresh,
    stop: () => clearInterval(timer),
    /**
     * Runs `scan` through the index, and again exactly for each vector answered with fewer than k rows: a
     * selective filter whose matches lie outside the probed partitions still gets them all. While the
     * table has no index, or the index is probed whole, the first scan is exact already, and fewer than k
     * rows are all there are. A filter (`filterKey`) whose probes found fewer than half of k lately is
     * searched exactly at once: it matches so few rows that the exact scan was sure to follow. (Filters
     * the probes answer nearly in full, 32 of 40 on average for 479 matches of 100k, were short for 57% to
     * 78% of queries: for them a memory of one short answer sends every search to the scan, which costs
     * twice the probes.)
     */
    async nearestThenExact(
      vectors: readonly Float32Array[],
      k: number,
      filterKey: string,
      scan: (vectors: readonly Float32Array[], exhaustive: boolean) => Promise<VectorHit[][]>,
    ): Promise<VectorHit[][]> {
      // Read with the first scan's configure(), before any await.
      const firstIsExact = probes === 0 || everyPartition;
      if (!firstIsExact && selective.take(filterKey)) return scan(vectors, true);
      const hits = await scan(vectors, false);
      if (firstIsExact) return hits;
      const short = hits.flatMap((h, i) => (h.length < k ? [i] : []));
      if (short.length > 0) {
        if (short.some((i) => hits[i]!.length < k / 2)) selective.remember(filterKey);
        const again = await scan(short.map((i) => vectors[i]!), true);
        short.forEach((i, j) => (hits[i] = again[j]!));
      }
      return hits;
    },
    /**
     * The query searched through the index with its probes, or by an exact scan of every row that passes
     * the filter: asked for, or while the table had no index (then exact even if another node has built
     * one since this handle last looked). Every partition is probed by naming a count
     * (maximumNprobes(0) returned rows without distances on clustered data): the most any index of ours
     * has, so the search stays exact over an index another node rebuilt with more partitions since.
     */
    configure: (query: VectorQuery, exhaustive: boolean): VectorQuery => {
      if (exhaustive || probes === 0) return query.bypassVectorIndex();
      if (everyPartition) return query.nprobes(maxPartitions);
      return refineFactor > 0 ? query.nprobes(probes).refineFactor(refineFactor) : query.nprobes(probes);
    },
  };
}

/**
 * BM25 over the content column with the shared analyser (see analyser.ts). Positions are left out: recall
 * never runs phrase queries, and the index is smaller and faster to update without them. Rows written
 * since the last optimize() are still searched, by a scan that grows with their number.
 */
const fullTextIndex = () => Index.fts({ ...lanceAnalyser.options, withPosition: false });

/**
 * Vectors one scan of searchMany() takes while recalls search (search() and keywordSearch() within the
 * last second). A scan holds LanceDB's threads until all its vectors are done and recalls' searches wait
 * behind it: during an API ingest at 10k memories, recall waited twice as long behind contradiction
 * searches of 10 vectors as behind searches of 1 or 2. Alone, bigger scans cost less per vector: bulk
 * ingest ran 8% slower at 10k, and 15% at 100k, with scans of 2 (bench/README.md, Recall during a heavy ingest).
 */
const scanVectorsWhileSearched = 2;
const searchedWithinMs = 1_000;

/** Tables of earlier layouts; their vectors are rebuilt from Postgres into the current table. */
const retiredTablePrefixes = ["memories_v1_"];

/** The vector index in LanceDB: one table per dimension count, kept open for the life of the process. */
export async function openLanceIndex(options: LanceIndexOptions): Promise<VectorIndex> {
  const { dimensions } = options;
  const annPolicy: AnnPolicy = {
    threshold: options.annThreshold ?? defaultAnnThreshold,
    quantizeFromBytes: options.quantizeFromBytes ?? defaultQuantizeFromBytes,
  };
  const schema = lanceSchema(dimensions);
  const connection = await connectLance(options);
  // Several nodes may open one location at the same moment: every step tolerates a concurrent twin.
  for (const name of await connection.tableNames()) {
    if (retiredTablePrefixes.some((prefix) => name.startsWith(prefix))) {
      await retryConflicts(() => connection.dropTable(name)).catch((err: unknown) => {
        if (!/not found|does not exist/i.test(String(err))) throw err;
      });
    }
  }
  const name = `memories_v2_${dimensions}`;
  // A table made before metadata_terms existed does not match the schema: it is opened, then given the column.
  const table = await retryConflicts(() =>
    connection.createEmptyTable(name, schema, { mode: "create", existOk: true }).catch((err: unknown) => {
      if (!/schema does not match/i.test(String(err))) throw err;
      return connection.openTable(name);
    }),
  );
  await ensureFullTextIndex(table, "content");
  // The backfill rewrites rows into fragments the vector and full-text indexes do not cover yet.
  const write = serialQueue();
  if ((await addMetadataTerms(table, options.metadataTermsOf)) > 0) await optimizeTable(table, dimensions, annPolicy, write);
  const rowCache = lanceRowCache(table, { dimensions, maxVectorBytes: options.heldVectorsBytes, readsScope: true });
  await rowCache.fill();
  const bm25 = bm25Searcher(table, "content", rowCache);
  const maintain = serialQueue();
  const gate = inFlightGate("the LanceDB vector index");
  const ann = await annSearch(table, options.annRefreshMs);

  // When recall last searched (search() and keywordSearch()), for searchMany's scan size.
  let lastSearched = -Infinity;
  const searched = () => {
    lastSearched = performance.now();
  };

  /** One scan for several query vectors. */
  function scan(vectors: readonly Float32Array[], where: LanceWhere, k: number, exhaustive: boolean): Promise<VectorHit[][]> {
    return vectorHits(rowCache, vectors.length, k, where, (clause) => {
      let query = table.vectorSearch(vectors[0]!);
      for (const v of vectors.slice(1)) query = query.addQueryVector(v);
      return ann.configure(withWhere(query.distanceType("cosine"), clause), exhaustive);
    });
  }

  /**
   * The nearest partitions first (LanceDB's default probes: at 100k rows p50 6 ms, the same top 10 as an
   * exact scan); a query answered with fewer than k rows is asked again by an exact scan of the rows that
   * pass the filter, so a selective filter whose matches lie in other partitions still gets all of them
   * (measured: 5 matches in 3,000 rows, the default probes returned 2).
   */
  async function searchMany(vectors: readonly Float32Array[], filter: VectorFilter, k: number): Promise<VectorHit[][]> {
    for (const v of vectors) checkDimensions(v, dimensions);
    if (vectors.length === 0 || k <= 0 || matchesNothing(filter)) return vectors.map(() => []);
    const hits: VectorHit[][] = [];
    const where = lanceWhere(filter);
    for (let i = 0; i < vectors.length; ) {
      const n = performance.now() - lastSearched < searchedWithinMs ? scanVectorsWhileSearched : vectors.length;
      hits.push(...(await ann.nearestThenExact(vectors.slice(i, i + n), k, where.scoped, (some, exhaustive) => scan(some, where, k, exhaustive))));
      i += n;
    }
    return hits;
  }

  return {
    kind: "lancedb",

    upsert: (records) =>
      gate.run(() =>
        write(async () => {
          if (records.length === 0) return;
          for (const r of records) checkDimensions(r.vector, dimensions);
          const rows = toArrowTable(schema, dimensions, lastPerId(records));
          await retryConflicts(() => table.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(rows));
        }),
      ),

    delete: (ids) =>
      gate.run(() =>
        write(async () => {
          if (ids.length > 0) await retryConflicts(() => table.delete(idIn(ids)));
        }),
      ),

    search: (vector, filter, k) => {
      searched();
      return gate.run(async () => (await searchMany([vector], filter, k))[0]!);
    },

    searchMany: (vectors, filter, k) => gate.run(() => searchMany(vectors, filter, k)),

    keywordSearch: (query, filter, k, withVectors) => {
      searched();
      return gate.run(() => keywordSearch(query, filter, k, withVectors));
    },

    optimize: () =>
      gate.run(() =>
        maintain(async () => {
          if (options.serialCommits) await write(() => optimizeTable(table, dimensions, annPolicy, (task) => task()));
          else await optimizeTable(table, dimensions, annPolicy, write);
          await ann.refresh();
          // Compaction moved rows to new addresses: their ids are read now, their vectors by a later search.
          await rowCache.fill(false);
        }),
      ),

    count: () => gate.run(() => table.countRows()),

    eachIdPage: (size, fn) => gate.run(() => eachLanceIdPage(table, size, fn)),

    holding: (ids) => gate.run(() => lanceHolding(table, ids)),

    async close() {
      ann.stop();
      await gate.close();
      table.close();
      connection.close();
    },
  };

  async function keywordSearch(query: string, filter: VectorFilter, k: number, withVectors: boolean): Promise<KeywordHit[]> {
    if (k <= 0 || matchesNothing(filter)) return [];
    return bm25(query, lanceWhere(filter), k, withVectors);
  }
}

/** The full-text index on `column`, named after the analyser's version (see ensureFullTextIndex). */
const fullTextIndexName = (column: string) => `${column}_fts_${lanceAnalyser.version}`;

/**
 * The hits of a vector search of `queries` query vectors (each result row names its vector in
 * `query_index`) with the WHERE clause it is given, read by row address (see lanceRowCache).
 */
export async function vectorHits(rowCache: LanceRowCache, queries: number, k: number, where: LanceWhere, query: (where: string) => VectorQuery): Promise<VectorHit[][]> {
  const { rows, ids } = await rowCache.search((byAddress, _, clause) => {
    const q = query(clause);
    return (byAddress ? q.select(["_distance"]).withRowId() : q.select(["id", "_distance"])).limit(k).toArrow();
  }, where);
  const hits: VectorHit[][] = Array.from({ length: queries }, () => []);
  // A search without hits yields an Arrow table without columns.
  const distances = rows.getChild("_distance");
  if (!distances) return hits;
  const queryIndex = rows.getChild("query_index");
  for (let i = 0; i < rows.numRows; i++) {
    hits[queryIndex ? Number(queryIndex.get(i)) : 0]!.push({ id: ids[i]!, similarity: 1 - (distances.get(i) as number) });
  }
  return hits;
}

/** Keyword hits of a full-text search's rows, with their ids and (when asked) vectors, in its order. */
function keywordHits({ rows, ids, vectors }: { rows: Awaited<ReturnType<Query["toArrow"]>>; ids: string[]; vectors: Float32Array[] | null }): KeywordHit[] {
  const scores = rows.getChild("_score");
  if (!scores) return [];
  const hits: KeywordHit[] = [];
  for (let i = 0; i < rows.numRows; i++) hits.push({ id: ids[i]!, bm25: scores.get(i) as number, vector: vectors?.[i] ?? null });
  return hits;
}

/**
 * BM25 search of `column`: the matches of a query's words, best first, each with its stored vector if
 * `withVectors`. Reading the vectors is a take of 2 KiB per hit from the data files (at 10k memories 40
 * hits cost 3.9 ms of LanceDB's CPU with them and 2.3 ms without), so they come from the row cache's
 * 8-bit copies while it holds the table's (see lanceRowCache).
 */
export function bm25Searcher(table: Table, column: string, rowCache: LanceRowCache) {
  const search = (query: string, where: LanceWhere, limit: number, withVectors: boolean) =>
    rowCache.search(
      (byAddress, readVectors, clause) => {
        const columns = readVectors ? ["vector", "_score"] : ["_score"];
        const q = withWhere(
          // A match query, never parsed: a string in double quotes would become a phrase query, which an
          // index without positions refuses (a 500 for any search quoting a word).
          table.query().fullTextSearch(new MatchQuery(query, column)),
          clause,
        );
        return (byAddress ? q.select(columns).withRowId() : q.select(["id", ...columns])).limit(limit).toArrow();
      },
      where,
      withVectors,
    );
  // While its full-text index holds no rows (a new table, until its first optimize), LanceDB 0.37 scans
  // the rows and cuts the scan at the limit before ranking: of 46 matches asked for 40, the best, scanned
  // last, was left out. Until then every match is asked for, without vectors, and ranked here. Once the
  // index has rows, rows written since the last optimize are ranked with the indexed ones.
  let indexHasRows = false;
  return async (query: string, where: LanceWhere, k: number, withVectors: boolean): Promise<KeywordHit[]> => {
    indexHasRows ||= ((await table.indexStats(fullTextIndexName(column)))?.numIndexedRows ?? 0) > 0;
    if (indexHasRows) return keywordHits(await search(query, where, k, withVectors));
    const best = keywordHits(await search(query, where, Math.max(k, await table.countRows()), false))
      .sort((a, b) => b.bm25 - a.bm25)
      .slice(0, k);
    if (!withVectors || best.length === 0) return best;
    const rows = await table.query().where(idIn(best.map((h) => h.id))).select(["id", "vector"]).toArrow();
    const ids = rows.getChild("id")!;
    const vectors = rows.getChild("vector")!;
    const byId = new Map<string, Float32Array>();
    for (let i = 0; i < rows.numRows; i++) byId.set(ids.get(i) as string, vectors.get(i)!.toArray() as Float32Array);
    return best.map((h) => ({ ...h, vector: byId.get(h.id) ?? null }));
  };
}

/**
 * Adds the metadata_terms column to a table made before it existed (a metadata-only change: every row
 * null), then backfills it: each page is a merge of ids and terms that leaves the other columns as they are.
 */
async function addMetadataTerms(table: Table, termsOf: MetadataTermsOf | undefined): Promise<number> {
  if (!(await table.schema()).fields.some((f) => f.name === metadataTermsColumn)) {
    await retryConflicts(async () => {
      await table.checkoutLatest();
      if ((await table.schema()).fields.some((f) => f.name === metadataTermsColumn)) return;
      await table.addColumns([{ name: metadataTermsColumn, valueSql: "arrow_cast(NULL, 'List(Utf8)')" }]);
    });
  }
  if (!termsOf) return 0;
  return backfillMetadataTerms(
    termsOf,
    async (limit) => {
      const page = await table.query().where(`${metadataTermsColumn} IS NULL`).select(["id"]).limit(limit).toArrow();
      return (page.getChild("id")?.toArray() ?? []) as string[];
    },
    (rows) => retryConflicts(() => table.mergeInsert("id").whenMatchedUpdateAll().execute(metadataTermsTable(rows))).then(() => undefined),
  );
}

/**
 * Creates the full-text index (BM25 on `column`) that keyword search needs from the first query, named
 * after the analyser's version; an index built with an earlier analyser is replaced (the new one is
 * built before the old one is dropped, so keyword search keeps working meanwhile). Nodes starting
 * together race to create it: the loser's conflict is retried, and then finds it built (or is told it
 * exists). A fresh Index per attempt: LanceDB refuses to use one twice.
 */
export function ensureFullTextIndex(table: Table, column: string): Promise<void> {
  return lanceIndexWork(() => createFullTextIndex(table, column));
}

async function createFullTextIndex(table: Table, column: string): Promise<void> {
  const name = fullTextIndexName(column);
  const onColumn = async () => (await table.listIndices()).filter((i) => i.indexType === "FTS" && i.columns.includes(column));
  await retryConflicts(async () => {
    // A twin's index may be committed already, and a handle looks for other processes' versions only at
    // its read-consistency interval (a second on object storage): without this, every retry lost again.
    await table.checkoutLatest();
    if (!(await onColumn()).some((i) => i.name === name)) {
      try {
        await table.createIndex(column, { config: fullTextIndex(), name });
      } catch (err) {
        if (!/already exists/i.test(String(err)) || !(await onColumn()).some((i) => i.name === name)) throw err;
      }
    }
    for (const old of await onColumn()) {
      if (old.name === name) continue;
      await table.dropIndex(old.name).catch((err: unknown) => {
        if (!/not found|does not exist/i.test(String(err))) throw err;
      });
    }
  });
}

/** A compaction's first tries, alongside this handle's writes. */
const compactAlongsideWrites: RetryPolicy = { attempts: 2, baseDelayMs: 20, maxDelayMs: 200 };

/**
 * Runs `run`, table.optimize(): compaction, pruning, and new rows folded into the indexes. The compaction (a
 * Rewrite) loses its commit to any merge-insert (an Update) that lands while it runs, and an indexer
 * writing steadily lands one every second or so: in a 100k-memory API ingest 21 optimizes failed after
 * all their retries, the rows outside the index piled up and the ingest fell from 100 to 20 memories/s.
 * So after a short try alongside the writes it runs with `holdingWrites`, this handle's writes waiting
 * for it (other nodes' are retried). The skills' index needs none of this: its optimize holds its writes.
 */
export async function compact(run: () => Promise<unknown>, holdingWrites: SerialQueue): Promise<void> {
  try {
    await retryConflicts(run, compactAlongsideWrites);
  } catch (err) {
    if (!isRetryableConflict(err)) throw err;
    await holdingWrites(() => retryConflicts(run));
  }
}

/** Compacts and folds new rows into the indexes, then creates the indexes the table has grown into. */
function optimizeTable(table: Table, dimensions: number, annPolicy: AnnPolicy, holdingWrites: SerialQueue): Promise<void> {
  return lanceIndexWork(() => compactAndIndex(table, dimensions, annPolicy, holdingWrites));
}

async function compactAndIndex(table: Table, dimensions: number, annPolicy: AnnPolicy, holdingWrites: SerialQueue): Promise<void> {
  await compact(() => table.optimize({ cleanupOlderThan: new Date(Date.now() - versionRetentionMs) }), holdingWrites);
  const rows = await table.countRows();
  if (rows === 0) return;
  const indexes = await table.listIndices();
  const indexed = new Set(indexes.flatMap((i) => i.columns));
  for (const [column, kind] of scalarIndexes) {
    if (!indexed.has(column)) await retryConflicts(() => table.createIndex(column, { config: kind() }));
  }
  await ensureAnnIndex(table, rows, dimensions, annPolicy);
}

/** When a collection gets its IVF index, and from what size that index is quantized. */
export interface AnnPolicy {
  /** Rows from which searches go through the index. */
  threshold: number;
  /** Bytes of vectors from which the index is IVF_RQ; once quantized it stays so. */
  quantizeFromBytes: number;
}

export const defaultAnnPolicy: AnnPolicy = { threshold: defaultAnnThreshold, quantizeFromBytes: defaultQuantizeFromBytes };

/**
 * Builds the IVF index once the table holds the policy's threshold of rows, retrains it as the table
 * grows, and rebuilds it quantized once its vectors outgrow the policy's bytes.
 */
export async function ensureAnnIndex(table: Table, rows: number, dimensions: number, policy: AnnPolicy): Promise<void> {
  if (rows < policy.threshold) return;
  const built = await annIndexOf(table);
  const kind: AnnKind = built?.kind === "rq" || rows * dimensions * 4 >= policy.quantizeFromBytes ? "rq" : "flat";
  const wanted = partitionsFor(rows);
  if (built?.kind === kind && wanted < 2 * built.partitions) return;
  await retryConflicts(() => table.createIndex("vector", { config: annKinds[kind].config(wanted), name: `${annKinds[kind].prefix}${wanted}` }));
  if (built) await retryConflicts(() => table.dropIndex(built.name));
}
