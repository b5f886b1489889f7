import { loadavg } from "node:os";
import pino from "pino";
import { ensureWorkspace } from "../../src/accounts/key-store.js";
import { loadConfig } from "../../src/config.js";
import { openDatabase, type Database } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrations.js";
import type { EmbeddingModelInfo } from "../../src/embeddings/embedder.js";
import { newId } from "../../src/ids.js";
import { insertMemories } from "../../src/memories/memory-store.js";
import { countTokens } from "../../src/recall/tokens.js";
import { checkIndexState } from "../../src/search/index-state.js";
import { createIndexer } from "../../src/search/indexer.js";
import { lanceLocationOf, openVectorIndex } from "../../src/search/vector/open-vector-index.js";
import { hashingEmbedder, hashVector } from "./hashing-embedder.js";
import { rssMb } from "./process-tree.js";
import { scaleMemory } from "./scale-data.js";

// Loading many memories fast through the server's own storage and index code (see bench/scale.ts): rows
// by insertMemories, vectors by a hashing embedder, indexing by the server's indexer, then optimize, vacuum and analyse.

export type Backend = "postgres" | "pglite";

const insertBatch = 1000;
// The built-in model's identity: the loaded index must be the one the server's model would have built.
const useLite: EmbeddingModelInfo = { provider: "use-lite", model: "universal-sentence-encoder-lite", dimensions: 512 };
const silentLog = pino({ level: "silent" });

/** The one-minute load average, to two decimals. */
export const load1m = () => Number(loadavg()[0]!.toFixed(2));

/** Where one backend's data lives across sizes. */
export interface Store {
  backend: Backend;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Creation times are spread over the year before this instant. */
  now: number;
  stored: number;
}

export interface LoadResult {
  from: number;
  to: number;
  /** Rows actually loaded: less than `to` when the load limit stopped it. */
  loaded: number;
  insertS: number;
  /** Until the last indexing job was written to LanceDB (indexing runs beside the inserts). */
  indexedS: number;
  optimizeS: number;
  analyseS: number;
  totalS: number;
  memoriesPerS: number;
  /** Minutes the whole size would take at this rate, when the load limit stopped it. */
  projectedMinutes?: number;
  loaderRssMb: number;
  loadAvg1m: number;
}

async function openStore(store: Store): Promise<Database> {
  return openDatabase({ databaseUrl: store.databaseUrl, dataDir: store.dataDir, poolSize: 4 });
}

/** Adds memories [store.stored, target) through insertMemories and the indexer; see the header. */
export async function loadTo(store: Store, target: number, limitS: number, container: string): Promise<LoadResult> {
  const from = store.stored;
  const t0 = performance.now();
  const db = await openStore(store);
  // The server's defaults, as the server that later opens this data has them.
  const config = { ...loadConfig({}), VECTOR_BACKEND: "lancedb" as const, LANCEDB_URI: undefined, DATA_DIR: store.dataDir };
  let vectors: Awaited<ReturnType<typeof openVectorIndex>> | undefined;
  try {
    await migrate(db);
    await checkIndexState(db, useLite, "lancedb", lanceLocationOf(config));
    vectors = await openVectorIndex(config, db, useLite.dimensions);
    const workspaceId = await ensureWorkspace(db, newId("ws"), "bench");
    const never = Number.MAX_SAFE_INTEGER;
    const indexer = createIndexer(db, vectors, hashingEmbedder(useLite), silentLog, { batchSize: 5000, pollMs: never, lingerMs: 0, optimizeEvery: never, optimizeEveryFraction: 0, idleOptimizeMs: never, idleOptimizeShare: 1, analyseEveryFraction: 0, keepIndexedMs: 0 }, () => false);
    const ids = { workspaceId, keyId: "key_bench_loader", container };
    let loaded = from;
    let projectedMinutes: number | undefined;
    for (let start = from; start < target; start += insertBatch) {
      const records = Array.from({ length: Math.min(insertBatch, target - start) }, (_, k) => scaleMemory(start + k, { ...ids, id: newId("mem") }, store.now));
      for (const r of records) r.contentTokens = countTokens(r.content);
      await insertMemories(db, records, new Map(records.map((r) => [r.id, hashVector(r.content, useLite.dimensions)])));
      loaded = start + records.length;
      // The indexer follows the inserts; drains coalesce, so this never queues more than one.
      if ((loaded - from) % 20_000 === 0) indexer.drain().catch((err: unknown) => console.error("indexing failed:", err));
      if ((loaded - from) % 50_000 === 0) {
        const elapsedS = (performance.now() - t0) / 1000;
        const rate = (loaded - from) / elapsedS;
        console.error(`  ${store.backend}: ${loaded} memories, ${rate.toFixed(0)}/s, load ${load1m()}`);
        const projectedS = (target - from) / rate;
        if (projectedS > limitS) {
          projectedMinutes = projectedS / 60;
          console.error(`  stopping: ${target} would take ${projectedMinutes.toFixed(1)} min at this rate, over the limit`);
          break;
        }
      }
    }
    const insertS = (performance.now() - t0) / 1000;
    await indexer.drain();
    const indexedS = (performance.now() - t0) / 1000;
    await indexer.stop();
    const t1 = performance.now();
    await vectors.optimize();
    const optimizeS = (performance.now() - t1) / 1000;
    const t2 = performance.now();
    await db.maintain();
    // The indexer deleted every job it did: without a vacuum, each recall's check for pending writes steps
    // over all of them (100k: 18.8 ms for the first, ~1.5 ms each in a minute of recalls) until autovacuum
    // comes to the outbox, about a minute later: a load's aftermath, not the steady state measured.
    if (db.kind === "postgres") await db.query("vacuum (analyze)");
    const analyseS = (performance.now() - t2) / 1000;
    store.stored = loaded;
    const totalS = (performance.now() - t0) / 1000;
    return {
      from,
      to: target,
      loaded,
      insertS,
      indexedS,
      optimizeS,
      analyseS,
      totalS,
      memoriesPerS: (loaded - from) / totalS,
      ...(projectedMinutes === undefined ? {} : { projectedMinutes }),
      loaderRssMb: rssMb("self"),
      loadAvg1m: load1m(),
    };
  } finally {
    await vectors?.close();
    await db.close();
  }
}

/** Memories stored, the server's own writes included. */
export async function countMemories(store: Store): Promise<number> {
  const db = await openStore(store);
  try {
    const [row] = await db.query<{ n: string }>("select count(*)::text as n from memories");
    return Number(row!.n);
  } finally {
    await db.close();
  }
}
