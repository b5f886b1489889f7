import type { FastifyBaseLogger } from "fastify";
import type { Database } from "../db/database.js";
import type { Embedder } from "../embeddings/embedder.js";
import { loadMemories, type MemoryRecord } from "../memories/memory-store.js";
import { metadataTerms } from "../memories/metadata-terms.js";
import { coalescedRuns } from "./coalesced-runs.js";
import { maintenanceTrigger } from "./maintenance-trigger.js";
import { reconcileInPages, reconcilePageSize } from "./reconcile.js";
import { vectorFromBytes } from "./vector/records.js";
import { everyNodeWrites, onWriterRole, reconcileAndDrain } from "./writer-role.js";
import type { VectorIndex, VectorRecord } from "./vector/vector-index.js";

// Postgres is the truth; the vector index follows it through the outbox. Every memory write queues its
// id in the same transaction, so a memory committed before a crash is indexed after the restart.

export interface IndexerOptions {
  batchSize: number;
  /** How often to look for work queued by other nodes or left by failures. */
  pollMs: number;
  /**
   * A background drain leaves fewer than batchSize jobs queued until the oldest has waited this long, so a
   * trickle of writes reaches the index in batches (see lingering); drain() writes at once.
   */
  lingerMs: number;
  /** Fold new rows into the ANN and full-text indexes after this many writes, or… */
  optimizeEvery: number;
  /** …this fraction of the rows the index held at the last fold, whichever is more… */
  optimizeEveryFraction: number;
  /** …or once the queue is empty, at most this often… */
  idleOptimizeMs: number;
  /** …and never so often that those folds take more than this share of the time (see idleFoldDue). */
  idleOptimizeShare: number;
  /** Refresh the memories' planner statistics at a fold once this fraction of the rows at the last refresh was written. */
  analyseEveryFraction: number;
  /**
   * How long a done job stays in the outbox (marked indexed_at) before it is deleted: the read-consistency
   * interval of the nodes' index handles. Until they look for newer versions they miss the write, and
   * recall finds the memory through its job instead (src/recall/pending-candidates.ts). 0 deletes at once.
   */
  keepIndexedMs: number;
}

// Rows written since the last optimize are searched by a scan, slower the more fragments hold them: at
// 100k memories, 1,633 such rows made keyword search p50 17 ms against 4 ms with none; 1,000 rows in 40
// fragments made a 10-vector search cost 150 ms of CPU, in one fragment 41. Each batch written is a
// fragment, hence batches of 256, and a few young jobs linger (lingering). An optimize costs about 25 ms of
// CPU per 1,000 rows of the table whatever was added (LanceDB: 0.12 s at 6k rows, 0.56 s at 21k, 1.6 s at
// 61k; its compaction rewrites the table, see idleFoldDue), so it runs once 1% of
// the table's rows are new, and after 250 writes at least: during an API ingest from 3,000 to 5,000
// memories, a fold every 250 writes instead of 1,000 took recall from p50/p95 212/498 ms to 124/283.
export const defaultIndexerOptions: IndexerOptions = {
  batchSize: 256,
  pollMs: 1000,
  lingerMs: 5_000,
  optimizeEvery: 250,
  optimizeEveryFraction: 0.01,
  idleOptimizeMs: 10_000,
  idleOptimizeShare: 0.25,
  analyseEveryFraction: 0.1,
  keepIndexedMs: 0,
};

interface PreparedBatch {
  /** Outbox sequence numbers the batch completes. */
  seqs: string[];
  records: VectorRecord[];
  /** Queued ids whose memory no longer exists. */
  gone: string[];
}

/**
 * Whether a fold may start now that the queue is empty, the last one having started at `lastStart` and
 * taken `lastMs`. A fold costs the whole table, not the rows it folds: LanceDB 0.37's compaction rewrites
 * every fragment under a million rows together with the ones the previous fold indexed (100k memories:
 * 1.9 to 3.3 s of CPU to fold one to ten rows; 1M: 10.9 s). Rows not yet folded are searched by a scan of
 * their fragments, which costs each search more the more there are (at 1M, 177 one-row fragments: a
 * vector search 10 → 28 ms, a full-text search 5 → 31 ms), so folds are spaced by their cost rather than
 * stopped.
 */
export const idleFoldDue = (now: number, lastStart: number, lastMs: number, opts: Pick<IndexerOptions, "idleOptimizeMs" | "idleOptimizeShare">): boolean =>
  now - lastStart >= Math.max(opts.idleOptimizeMs, lastMs / opts.idleOptimizeShare);

/** Memory jobs committed to the outbox and not yet written to the vector index, on every node. */
export async function indexBacklog(db: Database): Promise<number> {
  const [row] = await db.query<{ jobs: number }>("select count(*)::int as jobs from index_outbox where indexed_at is null");
  return row!.jobs;
}

/**
 * `maintains` says whether this node may optimise the index now: of several nodes on one index only the
 * holder of the maintainer lease does (src/search/maintainer-lease.ts). `writes` says whether it may write
 * the index at all: every node on a directory; on object storage only the maintainer, and the others
 * leave their jobs in the outbox for it (see indexWritersOf).
 */
export function createIndexer(
  db: Database,
  vectors: VectorIndex,
  embedder: Embedder,
  log: FastifyBaseLogger,
  opts = defaultIndexerOptions,
  maintains: () => boolean = () => true,
  writes: () => boolean = everyNodeWrites,
) {
  let starting: Promise<void> | undefined;
  let writesSinceOptimize = 0;
  const statistics = maintenanceTrigger(opts.analyseEveryFraction);
  let optimizeAfter = opts.optimizeEvery;
  let optimizing: Promise<void> | undefined;
  let lastOptimize = 0;
  let lastOptimizeMs = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let notified = false;

  /** Reads the next queued jobs after `afterSeq` and embeds their memories; undefined when none are left. */
  async function prepare(afterSeq: string): Promise<PreparedBatch | undefined> {
    const jobs = await db.query<{ seq: string; memory_id: string; version: number | null; vector: Uint8Array | null }>(
      "select seq, memory_id, version, vector from index_outbox where seq > $1 and indexed_at is null order by seq limit $2",
      [afterSeq, opts.batchSize],
    );
    if (jobs.length === 0) return undefined;
    const ids = [...new Set(jobs.map((j) => j.memory_id))];
    const rows = await loadMemories(db, ids);
    const present = new Set(rows.map((r) => r.id));
    // A job from the write path carries the vector of its version: only other memories reach the model.
    const written = new Map<string, Float32Array>();
    for (const j of jobs) {
      if (j.vector && j.vector.byteLength === embedder.info.dimensions * 4) written.set(`${j.memory_id}@${j.version}`, vectorFromBytes(j.vector));
    }
    const missing = rows.filter((r) => !written.has(`${r.id}@${r.version}`));
    const embedded = missing.length > 0 ? await embedder.embed(missing.map((r) => r.content)) : [];
    missing.forEach((r, i) => written.set(`${r.id}@${r.version}`, embedded[i]!));
    return {
      seqs: jobs.map((j) => j.seq),
      records: rows.map((r) => recordOf(r, written.get(`${r.id}@${r.version}`)!)),
      gone: ids.filter((id) => !present.has(id)),
    };
  }

  /** Writes a prepared batch to the index and removes its jobs from the outbox; returns how many it completed. */
  async function commit(batch: PreparedBatch): Promise<number> {
    if (batch.records.length > 0) await vectors.upsert(batch.records);
    if (batch.gone.length > 0) await vectors.delete(batch.gone);
    if (opts.keepIndexedMs > 0) await db.query("update index_outbox set indexed_at = now() where seq = any($1::bigint[])", [batch.seqs]);
    else await db.query("delete from index_outbox where seq = any($1::bigint[])", [batch.seqs]);
    const written = batch.records.length + batch.gone.length;
    writesSinceOptimize += written;
    statistics.wrote(written);
    if (writesSinceOptimize >= optimizeAfter) optimizeInBackground();
    return batch.seqs.length;
  }

  /** Indexing goes on while new rows are folded into the ANN and full-text indexes. */
  function optimizeInBackground(): void {
    if (optimizing || stopped || !maintains()) return;
    writesSinceOptimize = 0;
    lastOptimize = Date.now();
    optimizing = optimize()
      .catch((err: unknown) => log.warn({ err }, "index optimize failed; it is retried after the next writes"))
      .finally(() => {
        optimizing = undefined;
      });
  }

  async function optimize(): Promise<void> {
    const started = performance.now();
    await vectors.optimize();
    lastOptimizeMs = performance.now() - started;
    const rows = await vectors.count();
    optimizeAfter = Math.max(opts.optimizeEvery, Math.floor(opts.optimizeEveryFraction * rows));
    // Embedded Postgres (PGlite) runs no autovacuum: without statistics the planner filters every memory
    // of a container instead of using the full-text index (pgvector's keyword search at 100k: p50 209 -> 124 ms).
    // Refreshed on autovacuum's default trigger (a tenth of the table written) rather than at every fold:
    // the analyse blocks PGlite's event loop, 34 ms at 10k memories and about 180 at 100k.
    if (statistics.due()) {
      statistics.ran(rows);
      await db.query("analyze memories");
    }
  }

  /** Indexes one batch of queued memories; returns how many jobs it completed. */
  async function indexBatch(): Promise<number> {
    if (!writes()) return 0;
    const batch = await prepare("0");
    return batch ? commit(batch) : 0;
  }

  /**
   * Works through the outbox in order, embedding the next batch while the previous one is written, so the
   * model workers are not idle during index writes. Writes stay in outbox order. A job committed late with
   * a lower sequence number than the cursor is picked up by the next drain.
   */
  async function drainOnce(): Promise<number> {
    if (!writes()) return 0;
    if (opts.keepIndexedMs > 0) {
      await db.query("delete from index_outbox where indexed_at < now() - $1::double precision * interval '1 millisecond'", [opts.keepIndexedMs]);
    }
    let total = 0;
    let writing: Promise<number> | undefined;
    try {
      // Asked again before each write: embedding a batch can outlast the role.
      for (let batch = await prepare("0"); batch && writes(); ) {
        writing = commit(batch);
        // Handled below; marked now so a failure while the next batch embeds is not an unhandled rejection.
        writing.catch(() => undefined);
        batch = stopped || !writes() ? undefined : await prepare(batch.seqs.at(-1)!);
        total += await writing;
        writing = undefined;
      }
    } finally {
      // A failed prepare still lets the write in flight finish (or report its own failure).
      if (writing) total += await writing;
    }
    return total;
  }

  /** Processes the outbox until it is empty; concurrent callers share one run. */
  const runs = coalescedRuns(drainOnce, () => stopped, () => {
    if (writesSinceOptimize > 0 && idleFoldDue(Date.now(), lastOptimize, lastOptimizeMs, opts)) optimizeInBackground();
  });
  const drain = runs.run;

  /** Resolves once the drain and the fold under way (if any) have ended. */
  async function settled(): Promise<void> {
    await runs.settled();
    await optimizing;
  }

  /** See reconcileInPages for why a memory created meanwhile never loses its vector. */
  const reconcile = (pageSize = reconcilePageSize) =>
    reconcileInPages(db, vectors, { table: "memories", queueSql: "insert into index_outbox (memory_id) select unnest($1::text[])" }, pageSize);

  /**
   * Whether the queue is a few young jobs. Each write to the index is a fragment that every search scans
   * until the next fold (at 1M memories: +0.18 ms of CPU a vector search and +0.27 ms a full-text search per
   * fragment; a one-row write 10 ms with none and 40 ms with 90), so one write a job under a trickle of
   * writes made searches slower and folds more frequent. Recall finds queued memories through their jobs
   * meanwhile (src/recall/pending-candidates.ts).
   */
  async function lingering(): Promise<boolean> {
    if (opts.lingerMs <= 0) return false;
    // Counted up to batchSize, so a long backlog costs no more to look at than a short one.
    const [queue] = await db.query<{ jobs: number; waited_ms: number | null }>(
      `select (select count(*)::int from (select 1 from index_outbox where indexed_at is null limit $1) queued) as jobs,
              (select (extract(epoch from now() - enqueued_at) * 1000)::float8 from index_outbox where indexed_at is null order by seq limit 1) as waited_ms`,
      [opts.batchSize],
    );
    return queue!.jobs > 0 && queue!.jobs < opts.batchSize && (queue!.waited_ms ?? 0) < opts.lingerMs;
  }

  /** What the poll and notify() run: a drain, unless the queue is lingering; returns the jobs completed. */
  async function backgroundDrain(): Promise<number> {
    if (!writes()) return 0;
    return (await lingering()) ? 0 : drain();
  }

  const indexingFailed = (err: unknown) => log.error({ err }, "indexing failed; queued memories stay queued and are retried");

  /** Background work stops with the indexer: once stop() has returned, nothing here touches storage again. */
  function drainInBackground(): void {
    if (!stopped) backgroundDrain().catch(indexingFailed);
  }

  /** What a start finds queued (left by the last run, or queued by reconciliation) is written at once. */
  function drainNow(): void {
    if (!stopped) drain().catch(indexingFailed);
  }

  /** Reconciles with storage (without delaying the caller), then indexes the queue. */
  const takeWriterRole = onWriterRole(writes, () => {
    starting = reconcileAndDrain(reconcile, drainNow, log, "vector index");
  });

  return {
    drain,
    backgroundDrain,
    /** Indexes one batch; returns how many queued jobs it completed (0 when the queue is empty). */
    step: indexBatch,
    /**
     * Called after writes: indexes soon, without delaying the response. The writes answered in one turn of
     * the event loop (a group of single creates) are looked at once.
     */
    notify(): void {
      if (stopped || notified) return;
      notified = true;
      setImmediate(() => {
        notified = false;
        drainInBackground();
      });
    },
    /** Queues every memory the index lacks and drops vectors of memories that no longer exist. */
    reconcile,
    /**
     * Polls for queued jobs; on a node that writes the index (now, or once it takes the writer role),
     * reconciles with storage first, without delaying the caller.
     */
    start(): void {
      timer = setInterval(() => {
        takeWriterRole();
        drainInBackground();
      }, opts.pollMs);
      timer.unref();
      takeWriterRole();
    },
    settled,
    /** Resolves once the start's reconciliation and the drain of what it queued have ended. */
    async started(): Promise<void> {
      await starting;
      await runs.settled();
    },
    /** Stops background work and waits for what is running (reconciliation, a drain, an optimize) to end. */
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      await starting;
      await settled();
    },
  };
}

function recordOf(m: MemoryRecord, vector: Float32Array): VectorRecord {
  return {
    id: m.id,
    content: m.content,
    workspaceId: m.workspaceId,
    containers: m.containers,
    type: m.type,
    tags: m.tags,
    severity: m.severity,
    confidence: m.confidence,
    state: m.state,
    validFrom: m.validFrom.getTime(),
    validUntil: m.validUntil?.getTime() ?? null,
    createdAt: m.createdAt.getTime(),
    metadataTerms: metadataTerms(m.metadata),
    vector,
  };
}

export type Indexer = ReturnType<typeof createIndexer>;
