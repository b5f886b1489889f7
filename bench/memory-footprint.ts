// Where the server's memory goes: RSS of a server child process per phase, with the V8 share from its
// /metrics (heap used, external: wasm memories such as PGlite's, array buffers) and LanceDB's caches, the
// rest being native; and the same RSS by kind of mapping from /proc/<pid>/smaps (glibc's brk heap and
// arenas, wasm reservations, other anonymous memory such as V8's pages and large allocations, libraries),
// which tells a cache from memory the allocator keeps after it was freed.
//
//   npx tsx bench/memory-footprint.ts [--memories 10000] [--ingest api|bulk] [--backend pglite|postgres]
//                                     [--duration 10] [--soak-minutes 0] [--breakdown] [--heap-snapshots]
//                                     [--keep-data DIR]
//
// The server runs with npm start's allocator settings (bench/lib/server.ts) unless the environment sets them.
// Phases: idle (the server started and at rest 30 s, nothing stored); after ingesting --memories (api: REST batches of 100,
// 4 in flight, the real model embedding each and detecting contradictions, then until the indexer's backlog
// in /metrics is empty, so the recall phases do not race the indexer, and 15 s more; bulk: bench/lib/scale-load.ts
// before the server starts, then the server on that data); after the recall phases (semantic, keyword,
// hybrid at concurrency 1 and 8 for --duration s each, every query new, so the query cache fills); then
// every minute of a recall soak (hybrid at concurrency 4, new queries, one in ten repeated) for
// --soak-minutes, judged over its last 30 minutes against their mean and by its trend (bench/lib/soak.ts).
// --breakdown also starts idle servers with one model worker and with PostgreSQL's default shared_buffers in
// PGlite, to price a worker and the buffers. --heap-snapshots writes the server's V8 heap at idle and at the
// end (SIGUSR2, --heapsnapshot-signal) to bench/results/. --keep-data makes the PGlite data directory inside
// DIR and leaves it there, to examine a run's data afterwards.
// Writes bench/results/memory-footprint.json.

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, cpus, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { CallFailure, closedLoop } from "./lib/closed-loop.js";
import { caveat } from "./lib/report.js";
import { restLoad } from "./lib/rest-load.js";
import { onCleanUp, positiveOption, runBench, stopAfter } from "./lib/run.js";
import { rssMb } from "./lib/process-tree.js";
import { load1m, loadTo, type Backend } from "./lib/scale-load.js";
import { benchDatabase } from "./lib/scratch-database.js";
import { serverMetric, untilIndexed } from "./lib/server-metrics.js";
import { smapsSplit, type SmapsSplit } from "./lib/smaps.js";
import { soakLine, soakSummary } from "./lib/soak.js";
import { startServer, type BenchServer } from "./lib/server.js";
import { Recorder } from "./lib/stats.js";
import { syntheticMemory, syntheticQueries } from "./lib/synthetic.js";
import { alignedTable } from "./lib/table.js";

const container = "bench-1";
const resultsDir = fileURLToPath(new URL("results/", import.meta.url));

interface Options {
  memories: number;
  ingest: "api" | "bulk";
  backend: Backend;
  durationS: number;
  soakMinutes: number;
  breakdown: boolean;
  heapSnapshots: boolean;
  /** A directory the server's DATA_DIR is made in and left, to examine or reuse a run's data; PGlite only. */
  keepData: string | undefined;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      memories: { type: "string", default: "10000" },
      ingest: { type: "string", default: "api" },
      backend: { type: "string", default: "pglite" },
      duration: { type: "string", default: "10" },
      "soak-minutes": { type: "string", default: "0" },
      breakdown: { type: "boolean", default: false },
      "heap-snapshots": { type: "boolean", default: false },
      "keep-data": { type: "string" },
    },
  });
  if (values.ingest !== "api" && values.ingest !== "bulk") throw new Error(`--ingest must be api or bulk, got "${values.ingest}"`);
  if (values.backend !== "pglite" && values.backend !== "postgres") throw new Error(`--backend must be pglite or postgres, got "${values.backend}"`);
  const soak = Number(values["soak-minutes"]);
  if (values["keep-data"] !== undefined && values.backend !== "pglite") throw new Error("--keep-data keeps a PGlite data directory: use it with --backend pglite");
  if (!Number.isInteger(soak) || soak < 0) throw new Error(`--soak-minutes must be a whole number, got "${values["soak-minutes"]}"`);
  return {
    memories: positiveOption("memories", values.memories),
    ingest: values.ingest,
    backend: values.backend,
    durationS: positiveOption("duration", values.duration),
    soakMinutes: soak,
    breakdown: values.breakdown,
    heapSnapshots: values["heap-snapshots"],
    keepData: values["keep-data"],
  };
}

/** One reading of the server's memory, in MB. */
interface Sample {
  phase: string;
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  /** V8 external memory: wasm memories (PGlite) and array buffers. */
  externalMb: number;
  /** RSS neither heap nor external: native libraries (LanceDB), the model workers, code, allocator slack. */
  otherMb: number;
  /** LanceDB's index and metadata caches (native, inside the malloc heaps). */
  lanceCacheMb: number;
  /** The same RSS by kind of mapping, from /proc/<pid>/smaps. */
  mappings: SmapsSplit;
  loadAvg1m: number;
  at: string;
}

const metricMb = async (server: BenchServer, name: string) => (await serverMetric(server, name)) / 1048576;

async function sample(server: BenchServer, phase: string): Promise<Sample> {
  const rss = rssMb(server.pid);
  const heapUsedMb = await metricMb(server, "agentmem_nodejs_heap_size_used_bytes");
  const heapTotalMb = await metricMb(server, "agentmem_nodejs_heap_size_total_bytes");
  const externalMb = await metricMb(server, "agentmem_nodejs_external_memory_bytes");
  const lanceCacheMb = await metricMb(server, "agentmem_lancedb_cache_bytes");
  const s = {
    phase,
    rssMb: rss,
    heapUsedMb: Math.round(heapUsedMb),
    heapTotalMb: Math.round(heapTotalMb),
    externalMb: Math.round(externalMb),
    otherMb: Math.round(rss - heapTotalMb - externalMb),
    lanceCacheMb: Math.round(lanceCacheMb),
    mappings: smapsSplit(server.pid),
    loadAvg1m: load1m(),
    at: new Date().toISOString(),
  };
  const m = s.mappings;
  console.error(
    `  ${phase}: RSS ${s.rssMb} MB (heap ${s.heapUsedMb}/${s.heapTotalMb}, external ${s.externalMb}, other ${s.otherMb} (LanceDB caches ${s.lanceCacheMb}); ` +
      `brk ${m.brkHeap}, arenas ${m.mallocArenas}, reservations ${m.reservations}, other anon ${m.otherAnon}, libraries ${m.libraries}, files ${m.otherFiles}), load ${s.loadAvg1m}`,
  );
  return s;
}

/** A fresh data directory and database for one server. */
async function storage(options: Options): Promise<{ dataDir: string; databaseUrl: string | undefined }> {
  if (options.keepData) {
    await mkdir(options.keepData, { recursive: true });
    return { dataDir: await mkdtemp(path.join(options.keepData, "agentmem-footprint-")), databaseUrl: undefined };
  }
  const dataDir = await mkdtemp(path.join(tmpdir(), "agentmem-footprint-"));
  onCleanUp(() => rm(dataDir, { recursive: true, force: true }));
  if (options.backend === "pglite") return { dataDir, databaseUrl: undefined };
  return { dataDir, databaseUrl: await benchDatabase(undefined) };
}

async function start(options: Options, where: { dataDir: string; databaseUrl: string | undefined }, env: Record<string, string> = {}): Promise<BenchServer> {
  const server = await startServer(where.databaseUrl, {
    DATA_DIR: where.dataDir,
    ...(options.heapSnapshots ? { NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${resultsDir}` } : {}),
    ...env,
  });
  onCleanUp(server.stop);
  return server;
}

/** Settles before a reading: the server's timers (index folding, maintenance) run after writes stop. */
const settle = (s: number) => new Promise((resolve) => setTimeout(resolve, s * 1000));
const idleSettleS = 30;

/** Asks the server for a heap snapshot and gives it 20 s to write it (the server blocks while it does). */
async function heapSnapshot(server: BenchServer): Promise<void> {
  process.kill(server.pid, "SIGUSR2");
  await settle(20);
}

async function post(server: BenchServer, key: string, route: string, body: unknown): Promise<void> {
  const res = await fetch(server.url + route, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
  });
  if (!res.ok) throw new CallFailure(`HTTP ${res.status}`);
  await res.arrayBuffer();
}

async function ingestThroughApi(server: BenchServer, key: string, n: number): Promise<number> {
  const rec = new Recorder();
  const t0 = performance.now();
  await closedLoop({ concurrency: 4, calls: Math.ceil(n / 100) }, rec, async (b) => {
    const memories = Array.from({ length: Math.min(100, n - b * 100) }, (_, k) => ({ content: syntheticMemory(b * 100 + k), type: "fact", containers: [container] }));
    await post(server, key, "/api/v1/agent/memories", { memories });
    if ((b + 1) % 10 === 0) console.error(`  ingested ${(b + 1) * 100} (${(((b + 1) * 100) / ((performance.now() - t0) / 1000)).toFixed(0)}/s)`);
  });
  if (rec.errors > 0) throw new Error(`ingest failed: ${JSON.stringify(rec.errorKinds)}`);
  return (performance.now() - t0) / 1000;
}

const recallBody = (query: string, mode: string) => JSON.stringify({ query, searchMode: mode, limit: 10, containers: [container], includeReceipt: false });

async function recallPhase(server: BenchServer, key: string, mode: string, concurrency: number, durationS: number, query: (i: number) => string): Promise<void> {
  const rec = new Recorder();
  const elapsed = await restLoad({ url: server.url, key, connections: concurrency, durationS, request: (i) => ({ method: "POST", path: "/api/v1/agent/recall", body: recallBody(query(i), mode) }) }, rec);
  console.error(`    recall ${mode} c${concurrency}: ${(rec.ok / elapsed).toFixed(1)}/s, ${rec.errors} errors`);
  if (rec.errors > 0) throw new Error(`recall failed: ${JSON.stringify(rec.errorKinds)}`);
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  stopAfter(3600 + options.soakMinutes * 60 * 1.2);
  await mkdir(resultsDir, { recursive: true });
  const run = { cores: availableParallelism(), cpu: cpus()[0]?.model ?? "unknown", node: process.version, loadAvg1m: load1m(), startedAt: new Date().toISOString(), ...options };
  const queries = syntheticQueries(50_000);
  let q = 0;
  const fresh = () => queries[q++ % queries.length]!;
  const samples: Sample[] = [];
  const breakdown: Sample[] = [];
  const file = path.join(resultsDir, "memory-footprint.json");
  let ingestS = 0;
  let indexCatchUpS = 0;
  // Written after every reading, so a run that fails later keeps what it measured.
  const save = async (extra: Record<string, unknown> = {}) =>
    writeFile(file, JSON.stringify({ run: { ...run, ingestS, indexCatchUpS, loadAvg1mNow: load1m(), caveat }, samples, breakdown, ...extra }, null, 2) + "\n");
  const record = async (list: Sample[], s: Sample) => {
    list.push(s);
    await save();
  };

  const where = await storage(options);
  if (options.ingest === "bulk") {
    console.error(`loading ${options.memories} memories in bulk…`);
    ingestS = (await loadTo({ backend: options.backend, ...where, now: Date.now(), stored: 0 }, options.memories, 3600, container)).totalS;
  }
  console.error("starting the server…");
  const server = await start(options, where);
  const key = await server.createKey("bench", container);
  // At rest, not starting: on a new data directory the thread that created PGlite's files exits about
  // 10 s after the server is ready and V8 hands back the startup's garbage about 10 s later (-150 MB).
  await settle(idleSettleS);
  await record(samples, await sample(server, options.ingest === "bulk" ? `idle on ${options.memories} memories loaded in bulk` : "idle"));
  if (options.heapSnapshots) await heapSnapshot(server);

  if (options.ingest === "api") {
    console.error(`ingesting ${options.memories} memories over REST…`);
    ingestS = await ingestThroughApi(server, key, options.memories);
    indexCatchUpS = await untilIndexed(server);
    console.error(`  the index had every memory ${indexCatchUpS.toFixed(0)} s after the last write was answered`);
    // The indexer optimizes once writes have stopped for 10 s.
    await settle(15);
    await record(samples, await sample(server, `after ingesting ${options.memories}`));
  }

  console.error("recall phases…");
  for (const mode of ["semantic", "keyword", "hybrid"]) {
    for (const c of [1, 8]) await recallPhase(server, key, mode, c, options.durationS, fresh);
  }
  await settle(5);
  await record(samples, await sample(server, "after the recall phases"));

  if (options.soakMinutes > 0) {
    console.error(`soak: ${options.soakMinutes} min of hybrid recall at concurrency 4…`);
    const repeated = queries.slice(0, 200);
    for (let minute = 1; minute <= options.soakMinutes; minute++) {
      await recallPhase(server, key, "hybrid", 4, 60, (i) => (i % 10 === 0 ? repeated[i % repeated.length]! : fresh()));
      await record(samples, await sample(server, `soak minute ${minute}`));
    }
  }
  if (options.heapSnapshots) await heapSnapshot(server);
  await server.stop();

  if (options.breakdown) {
    console.error("breakdown: idle servers with one model worker, and with PGlite's shared_buffers at PostgreSQL's default…");
    for (const [label, env] of [
      ["idle, EMBEDDING_WORKERS=1", { EMBEDDING_WORKERS: "1" }],
      ["idle, EMBEDDING_WORKERS=2", { EMBEDDING_WORKERS: "2" }],
      ["idle, PGLITE_SHARED_BUFFERS_BYTES=128 MiB", { PGLITE_SHARED_BUFFERS_BYTES: String(128 * 1048576) }],
    ] as const) {
      const fresh = await start(options, await storage(options), env);
      await settle(idleSettleS);
      await record(breakdown, await sample(fresh, label));
      await fresh.stop();
    }
  }

  const soak = soakSummary(samples.filter((s) => s.phase.startsWith("soak")));
  const rows = [["phase", "RSS MB", "heap used", "heap total", "external", "other", "LanceDB caches", "brk heap", "arenas", "reservations", "other anon", "libraries", "files", "load avg"]];
  for (const s of [...samples, ...breakdown]) {
    const m = s.mappings;
    rows.push([s.phase, ...[s.rssMb, s.heapUsedMb, s.heapTotalMb, s.externalMb, s.otherMb, s.lanceCacheMb, m.brkHeap, m.mallocArenas, m.reservations, m.otherAnon, m.libraries, m.otherFiles, s.loadAvg1m].map(String)]);
  }
  console.log(
    [
      `Server memory (${options.backend}, ${options.memories} memories by ${options.ingest} in ${ingestS.toFixed(0)} s${options.ingest === "api" ? `, all indexed ${indexCatchUpS.toFixed(0)} s later` : ""}; MB; external = V8 external incl. wasm, other = RSS - heap total - external, of which LanceDB caches from /metrics; then the same RSS by mapping from /proc/<pid>/smaps: brk heap and arenas = glibc malloc, reservations = wasm memories):`,
      alignedTable(rows, [0]),
      ...(soak ? [soakLine(soak)] : []),
      `Note: ${caveat}`,
    ].join("\n"),
  );
  await save({ soak: soak ?? null });
  console.log(`\nwritten to ${file}`);
  return 0;
}

runBench(main);
