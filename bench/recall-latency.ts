// Ingest rate and recall latency at scale: synthetic memories in ONE container, the real server in a child
// process with embedded storage (PGlite + LanceDB, the defaults) in a temporary DATA_DIR.
//
//   npx tsx bench/recall-latency.ts [--sizes 10000,100000] [--duration 10] [--concurrency 8]
//                                   [--budget 1500] [--timeout 1800] [--rare 20]
//
// For each size, ascending: ingest up to it through the REST batch endpoint (100 per request, 4 in flight)
// and measure two rates: API acceptance (memories/s until the last batch is answered) and end-to-end
// indexed (memories/s until the vector index has them all: the server's agentmem_index_backlog_jobs in
// /metrics, polled every 0.5 s after the last batch is answered, reaches 0). A recall cannot tell: since
// read-your-writes it finds a memory through the outbox before the indexer has written it.
// Then recall latency per mode (semantic, keyword, hybrid) over REST and gRPC, closed loop, at
// concurrency 1 (latency) and --concurrency (throughput). Every call uses a query text not sent before,
// so the server's query-embedding cache never hides the model; one more phase per transport cycles
// through 200 already-seen queries to show the cache effect, and a last one measures hybrid recall at
// concurrency 1 during a heavy ingest (REST batches of 100, 4 in flight, for at least --duration s more,
// which the indexer then finishes). RSS of the server process (VmRSS) is read after ingest and after the
// recall phases. --rare memories of another type (lessons), written first, are recalled with a type
// filter at concurrency 1: a search that finds fewer rows than recall's pool.
//
// Time bound: --budget (seconds, default 1500 = 25 min) for the whole run. Embedding is the bottleneck of
// ingest; after each ingest step the bench projects the time the next size needs at the measured indexed
// rate and, when it would not fit with its recall phases, measures the largest size that does (rounded
// down to 5,000) and says so. Writes bench/results/recall-latency.json.

import { mkdir, writeFile } from "node:fs/promises";
import { availableParallelism, cpus, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { CallFailure, closedLoop } from "./lib/closed-loop.js";
import { recallGrpcClient, type RecallGrpc } from "./lib/grpc.js";
import { caveat } from "./lib/report.js";
import { restLoad } from "./lib/rest-load.js";
import { startServer, type BenchServer } from "./lib/server.js";
import { untilIndexed } from "./lib/server-metrics.js";
import { cpuBetween, rssMb, serverCpuMs } from "./lib/process-tree.js";
import { Recorder, type PhaseResult } from "./lib/stats.js";
import { syntheticMemory, syntheticQueries } from "./lib/synthetic.js";
import { alignedTable } from "./lib/table.js";
import { onCleanUp, positiveOption, runBench, stopAfter } from "./lib/run.js";

/**
 * A recall phase with the server's CPU per call, by thread: its main thread (HTTP, PGlite, JavaScript),
 * LanceDB's threads, its other threads (V8, libuv) and the model process. Unlike req/s on a shared
 * machine, these hardly move with what else runs.
 */
interface RecallPhaseResult extends PhaseResult {
  cpuMsPerCall: { main: number; lancedb: number; other: number; model: number };
}

const batchSize = 100;
const ingestConcurrency = 4;
const container = "bench-1";
const modes = ["semantic", "keyword", "hybrid"] as const;
type Mode = (typeof modes)[number];
const grpcModes: Record<Mode, string> = { semantic: "SEARCH_MODE_SEMANTIC", keyword: "SEARCH_MODE_KEYWORD", hybrid: "SEARCH_MODE_HYBRID" };
const repeatedPool = 200;
const limit = 10;

interface Options {
  sizes: number[];
  durationS: number;
  concurrency: number;
  budgetS: number;
  timeoutS: number;
  rare: number;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: "string", default: "10000,100000" },
      duration: { type: "string", default: "10" },
      concurrency: { type: "string", default: "8" },
      budget: { type: "string", default: "1500" },
      timeout: { type: "string", default: "1800" },
      rare: { type: "string", default: "20" },
    },
  });
  return {
    sizes: values.sizes
      .split(",")
      .map((s) => positiveOption("sizes", s.trim()))
      .sort((a, b) => a - b),
    durationS: positiveOption("duration", values.duration),
    concurrency: positiveOption("concurrency", values.concurrency),
    budgetS: positiveOption("budget", values.budget),
    timeoutS: positiveOption("timeout", values.timeout),
    rare: positiveOption("rare", values.rare),
  };
}

interface Bench {
  options: Options;
  server: BenchServer;
  key: string;
  grpc: RecallGrpc;
  stored: number;
  /** Queries never sent yet: each call takes the next one. */
  nextQuery: () => string;
  startedMs: number;
}

async function post(b: Bench, route: string, body: unknown): Promise<any> {
  const res = await fetch(b.server.url + route, {
    method: "POST",
    headers: { authorization: `Bearer ${b.key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  if (!res.ok) throw new CallFailure(`HTTP ${res.status}`);
  return res.json();
}

const memoryInput = (i: number) => ({ content: syntheticMemory(i), type: "fact", containers: [container] });

interface IngestResult {
  from: number;
  to: number;
  apiS: number;
  indexedS: number;
  apiMemoriesPerS: number;
  indexedMemoriesPerS: number;
  batch: PhaseResult;
  rssMbAfter: number;
}

/** Ingests memories [stored, target) and waits until they are all indexed. */
async function ingestTo(b: Bench, target: number): Promise<IngestResult> {
  const from = b.stored;
  const rec = new Recorder();
  const calls = Math.ceil((target - from) / batchSize);
  const t0 = performance.now();
  const apiS = await closedLoop({ concurrency: ingestConcurrency, calls }, rec, async (i) => {
    const first = from + i * batchSize;
    const n = Math.min(batchSize, target - first);
    await post(b, "/api/v1/agent/memories", { memories: Array.from({ length: n }, (_, k) => memoryInput(first + k)) });
  });
  if (rec.errors > 0) throw new Error(`ingest failed: ${JSON.stringify(rec.errorKinds)}`);
  b.stored = target;
  await untilIndexed(b.server, () => elapsed(b) > b.options.timeoutS);
  const indexedS = (performance.now() - t0) / 1000;
  const n = target - from;
  const batch = rec.result({ phase: `ingest ${from}->${target} (batch ${batchSize})`, transport: "rest", dataSize: from, concurrency: ingestConcurrency }, apiS, n);
  return { from, to: target, apiS, indexedS, apiMemoriesPerS: n / apiS, indexedMemoriesPerS: n / indexedS, batch, rssMbAfter: rssMb(b.server.pid) };
}

const elapsed = (b: Bench) => (performance.now() - b.startedMs) / 1000;

const restRecallBody = (query: string, mode: Mode, types?: string[]) =>
  JSON.stringify({ query, searchMode: mode, limit, containers: [container], includeReceipt: false, ...(types && { types }) });

/** The rare memories' type; every other memory is a fact. */
const rareType = "lesson";

/** Writes the --rare memories of the rare type and waits until they are indexed. */
async function ingestRare(b: Bench): Promise<void> {
  const memories = Array.from({ length: b.options.rare }, (_, i) => ({ content: syntheticMemory(10_000_000 + i), type: rareType, containers: [container] }));
  for (let i = 0; i < memories.length; i += batchSize) await post(b, "/api/v1/agent/memories", { memories: memories.slice(i, i + batchSize) });
  await untilIndexed(b.server, () => elapsed(b) > b.options.timeoutS);
}

/** One timed closed-loop recall phase. `query(i)` gives the text of the i-th call. */
async function recallPhase(b: Bench, mode: Mode, transport: "rest" | "grpc", concurrency: number, label: string, query: (i: number) => string, types?: string[]) {
  const rec = new Recorder();
  const info = { phase: `recall ${mode}${label}`, transport, dataSize: b.stored, concurrency } as const;
  const durationS = b.options.durationS;
  const cpuBefore = serverCpuMs(b.server.pid);
  const elapsedS =
    transport === "rest"
      ? await restLoad(
          {
            url: b.server.url,
            key: b.key,
            connections: concurrency,
            durationS,
            request: (i) => ({ method: "POST", path: "/api/v1/agent/recall", body: restRecallBody(query(i), mode, types) }),
          },
          rec,
        )
      : await closedLoop({ concurrency, durationS }, rec, async (i) => {
          await b.grpc.recall({ query: query(i), searchMode: grpcModes[mode], limit, containers: [container], includeReceipt: false, types: types?.map((t) => `MEMORY_TYPE_${t.toUpperCase()}`) ?? [] });
        });
  const { children: model, ...threads } = cpuBetween(cpuBefore, serverCpuMs(b.server.pid), Math.max(1, rec.ok + rec.errors));
  const r: RecallPhaseResult = { ...rec.result(info, elapsedS), cpuMsPerCall: { ...threads, model } };
  const cpu = r.cpuMsPerCall;
  console.error(
    `  ${r.phase} ${r.transport} c${concurrency} @${r.dataSize}: ${r.reqPerS.toFixed(1)} req/s, p50 ${r.p50Ms.toFixed(1)} p95 ${r.p95Ms.toFixed(1)} p99 ${r.p99Ms.toFixed(1)} ms, ${r.errors} errors; ` +
      `server CPU ms a call: main ${cpu.main.toFixed(1)}, LanceDB ${cpu.lancedb.toFixed(1)}, other ${cpu.other.toFixed(1)}, model ${cpu.model.toFixed(1)}`,
  );
  return r;
}

async function recallPhases(b: Bench): Promise<RecallPhaseResult[]> {
  const results: RecallPhaseResult[] = [];
  const fresh = () => b.nextQuery();
  // Untimed warm-up of both transports and every code path.
  const warm = { ...b, options: { ...b.options, durationS: 2 } };
  for (const mode of modes) {
    await recallPhase(warm, mode, "rest", 2, " (warm-up)", fresh);
    await recallPhase(warm, mode, "grpc", 2, " (warm-up)", fresh);
  }
  for (const mode of modes) {
    for (const concurrency of [1, b.options.concurrency]) {
      results.push(await recallPhase(b, mode, "rest", concurrency, "", fresh));
      results.push(await recallPhase(b, mode, "grpc", concurrency, "", fresh));
    }
  }
  // A selective filter: fewer matches than the pool asks the vector index for.
  results.push(await recallPhase(b, "hybrid", "rest", 1, ` (type filter: ${b.options.rare} ${rareType}s)`, fresh, [rareType]));
  // The cache effect: queries already embedded once.
  const pool = Array.from({ length: repeatedPool }, fresh);
  await Promise.all(pool.map((q) => post(b, "/api/v1/agent/recall", { query: q, searchMode: "semantic", limit: 1, containers: [container] })));
  for (const concurrency of [1, b.options.concurrency]) {
    results.push(await recallPhase(b, "hybrid", "rest", concurrency, " (repeated queries)", (i) => pool[i % pool.length]!));
  }
  return results;
}

/** The ingest runs this long before the recall phase that measures during it starts. */
const ingestLeadS = 2;

/** Seconds the recall phases of one size take: 12 timed phases, 1 filtered, 2 repeated, 6 warm-ups of 2 s, one during an ingest. */
const recallPhasesS = (o: Options) => 15 * (o.durationS + 0.5) + 6 * 2.5 + 5 + 2 * o.durationS + ingestLeadS + 30;

/**
 * Hybrid recall at concurrency 1 while memories are written as fast as the server takes them: enough
 * batches for twice --duration at the ingest rate just measured, so the recall phase, started ingestLeadS
 * in, ends before the writes do. The memories written join the data set.
 */
async function recallDuringIngest(b: Bench, apiMemoriesPerS: number): Promise<{ recall: RecallPhaseResult; ingest: IngestResult }> {
  const n = Math.max(1_000, Math.ceil((apiMemoriesPerS * 2 * b.options.durationS) / batchSize) * batchSize);
  const ingesting = ingestTo(b, b.stored + n);
  await new Promise((resolve) => setTimeout(resolve, ingestLeadS * 1000));
  const recall = await recallPhase(b, "hybrid", "rest", 1, ` (during an ingest of ${n})`, () => b.nextQuery());
  return { recall, ingest: await ingesting };
}

interface SizeResult {
  requestedSize: number;
  measuredSize: number;
  capped: boolean;
  ingest: IngestResult;
  rssMbAfterRecall: number;
  recall: RecallPhaseResult[];
  /** The ingest the last recall phase ran during. */
  ingestDuringRecall: IngestResult;
}

async function run(b: Bench): Promise<{ sizes: SizeResult[]; notes: string[] }> {
  const sizes: SizeResult[] = [];
  const notes: string[] = [];
  let indexedRate: number | undefined;
  for (const requested of b.options.sizes) {
    let target = requested;
    if (indexedRate !== undefined) {
      const left = b.options.budgetS - elapsed(b) - recallPhasesS(b.options) - 15;
      const fits = b.stored + Math.floor((left * indexedRate) / 5000) * 5000;
      if (fits < requested) {
        target = Math.max(b.stored, Math.min(requested, fits - (fits % 5000)));
        const note =
          `size ${requested}: ingest at the measured ${indexedRate.toFixed(1)} memories/s (indexed) would take ` +
          `${((requested - b.stored) / indexedRate / 60).toFixed(1)} more minutes, beyond the ${b.options.budgetS} s budget; ` +
          (target > b.stored ? `measuring ${target} instead` : "not measured");
        notes.push(note);
        console.error(`  ${note}`);
        if (target <= b.stored) break;
      }
    }
    console.error(`ingesting to ${target} memories…`);
    const ingest = await ingestTo(b, target);
    indexedRate = ingest.indexedMemoriesPerS;
    console.error(
      `  ${ingest.to - ingest.from} memories: API ${ingest.apiMemoriesPerS.toFixed(0)}/s (${ingest.apiS.toFixed(1)} s), ` +
        `indexed ${ingest.indexedMemoriesPerS.toFixed(1)}/s (${ingest.indexedS.toFixed(1)} s), RSS ${ingest.rssMbAfter} MB`,
    );
    const recall = await recallPhases(b);
    const during = await recallDuringIngest(b, ingest.apiMemoriesPerS);
    recall.push(during.recall);
    sizes.push({ requestedSize: requested, measuredSize: target, capped: target !== requested, ingest, rssMbAfterRecall: rssMb(b.server.pid), recall, ingestDuringRecall: during.ingest });
  }
  return { sizes, notes };
}

const ms = (v: number) => (Number.isNaN(v) ? "-" : v.toFixed(1));

function report(sizes: SizeResult[], notes: string[]): string {
  const ingestRows = [["size", "memories", "API s", "API mem/s", "batch p50 ms", "batch p95 ms", "indexed s", "indexed mem/s", "RSS after ingest MB", "RSS after recall MB"]];
  const ingests = sizes.flatMap((s) => [
    { size: String(s.measuredSize), i: s.ingest, rssAfterRecall: String(s.rssMbAfterRecall) },
    { size: `${s.ingestDuringRecall.from} (during recall)`, i: s.ingestDuringRecall, rssAfterRecall: "-" },
  ]);
  for (const { size, i, rssAfterRecall } of ingests) {
    ingestRows.push([
      size,
      String(i.to - i.from),
      i.apiS.toFixed(1),
      i.apiMemoriesPerS.toFixed(0),
      ms(i.batch.p50Ms),
      ms(i.batch.p95Ms),
      i.indexedS.toFixed(1),
      i.indexedMemoriesPerS.toFixed(1),
      String(i.rssMbAfter),
      rssAfterRecall,
    ]);
  }
  const recallRows = [["size", "phase", "transport", "conc", "req/s", "p50 ms", "p95 ms", "p99 ms", "calls", "errors", "CPU ms a call: main", "LanceDB", "other", "model"]];
  for (const s of sizes) {
    for (const r of s.recall) {
      const cpu = r.cpuMsPerCall;
      recallRows.push([
        String(r.dataSize),
        r.phase,
        r.transport,
        String(r.concurrency),
        r.reqPerS.toFixed(1),
        ms(r.p50Ms),
        ms(r.p95Ms),
        ms(r.p99Ms),
        String(r.ok),
        String(r.errors),
        ...[cpu.main, cpu.lancedb, cpu.other, cpu.model].map((v) => v.toFixed(1)),
      ]);
    }
  }
  return [
    "Ingest (REST batch of 100, 4 in flight; indexed = until the server reports no indexing backlog in /metrics):",
    alignedTable(ingestRows, []),
    "",
    `Recall, limit ${limit}, one container; each call a query never sent before unless marked repeated:`,
    alignedTable(recallRows, [1, 2]),
    "",
    ...notes.map((n) => `Note: ${n}`),
    `Note: ${caveat}`,
  ].join("\n");
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  stopAfter(options.timeoutS);
  const startedMs = performance.now();
  const runInfo = {
    backend: "pglite + lancedb",
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? "unknown",
    node: process.version,
    loadAvg1m: loadavg()[0]!,
    durationS: options.durationS,
    concurrency: options.concurrency,
    budgetS: options.budgetS,
    rare: options.rare,
    startedAt: new Date().toISOString(),
  };
  console.error("starting the server (PGlite + LanceDB)…");
  const server = await startServer(undefined);
  onCleanUp(server.stop);
  const key = await server.createKey("bench", container);
  const grpc = recallGrpcClient(server.url, key);
  onCleanUp(() => grpc.close());
  // Enough distinct queries for every phase at the highest rate seen on this machine, with room to spare.
  const queries = syntheticQueries(60_000);
  let q = 0;
  const nextQuery = () => {
    if (q >= queries.length) throw new Error("ran out of distinct queries");
    return queries[q++]!;
  };
  const b: Bench = { options, server, key, grpc, stored: 0, nextQuery, startedMs };
  const rssAtStart = rssMb(server.pid);
  await ingestRare(b);
  const { sizes, notes } = await run(b);
  const totalS = elapsed(b);
  console.log(report(sizes, notes));
  const file = fileURLToPath(new URL("results/recall-latency.json", import.meta.url));
  await mkdir(path.dirname(file), { recursive: true });
  const runOut = { ...runInfo, rssMbAtStart: rssAtStart, totalS, loadAvg1mAfter: loadavg()[0]!, caveat, notes };
  await writeFile(file, JSON.stringify({ run: runOut, sizes }, null, 2) + "\n");
  console.log(`\nwritten to ${file} (total ${(totalS / 60).toFixed(1)} min)`);
  const failing = sizes.flatMap((s) => s.recall).filter((r) => r.errors > 0.01 * (r.ok + r.errors));
  for (const r of failing) console.error(`FAIL: ${r.phase} (${r.transport}, c${r.concurrency}) had ${r.errors} errors: ${JSON.stringify(r.errorKinds)}`);
  return failing.length > 0 ? 1 : 0;
}

runBench(main);
