// Recall throughput of one node against two nodes behind a round-robin client.
//
//   npx tsx bench/several-nodes.ts [--size 10000] [--duration 15] [--concurrency 8] [--repeats 2]
//                                  [--database-url postgres://…] [--timeout 1800]
//
// Two real servers (src/main.ts, each its own process) share one PostgreSQL database (--database-url, or
// a throwaway cluster from the installed binaries) and one LanceDB directory, as a deployment of several
// nodes does. Node A starts alone; --size synthetic memories are written through it (contradiction
// detection off) and the bench waits until they are indexed and folded into the index. Node B then
// starts. A closed loop of --concurrency clients recalls over REST, every call with a query text never
// sent before (so every hybrid recall embeds its query), in two set-ups: all calls to node A ("1 node"),
// and call i to node i mod 2 ("2 nodes"). The two alternate --repeats times per search mode, so a change
// of load on the machine meanwhile falls on both. Hybrid recall embeds the query; keyword recall does
// not, so it shows what a second node adds where the model is not the limit. Prints a table and writes
// bench/results/several-nodes.json.

import { connect } from "@lancedb/lancedb";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { CallFailure, closedLoop } from "./lib/closed-loop.js";
import { postJson, postOrFail } from "./lib/http-json.js";
import { caveat } from "./lib/report.js";
import { onCleanUp, positiveOption, runBench, stopAfter } from "./lib/run.js";
import { benchDatabase } from "./lib/scratch-database.js";
import { startServer, type BenchServer } from "./lib/server.js";
import { Recorder, type PhaseResult } from "./lib/stats.js";
import { syntheticMemory, syntheticQueries } from "./lib/synthetic.js";
import { alignedTable } from "./lib/table.js";

const resultsFile = path.join(path.dirname(fileURLToPath(import.meta.url)), "results", "several-nodes.json");
const container = "bench-1";
const batchSize = 100;
const ingestConcurrency = 4;
const modes = ["hybrid", "keyword"] as const;
type Mode = (typeof modes)[number];
const setups = ["1 node", "2 nodes"] as const;
type Setup = (typeof setups)[number];
const warmupS = 3;

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      size: { type: "string", default: "10000" },
      duration: { type: "string", default: "15" },
      concurrency: { type: "string", default: "8" },
      repeats: { type: "string", default: "2" },
      "database-url": { type: "string" },
      timeout: { type: "string", default: "1800" },
    },
  });
  return {
    size: positiveOption("size", values.size),
    durationS: positiveOption("duration", values.duration),
    concurrency: positiveOption("concurrency", values.concurrency),
    repeats: positiveOption("repeats", values.repeats),
    databaseUrl: values["database-url"] ?? (process.env.BENCH_DATABASE_URL || undefined),
    timeoutS: positiveOption("timeout", values.timeout),
  };
}

async function post(url: string, key: string, body: unknown): Promise<any> {
  const res = await postJson(url, key, JSON.stringify(body));
  if (res.status !== 200) throw new CallFailure(`HTTP ${res.status}`);
  return res.body;
}

/** Writes `size` memories through `node`, 100 a request, 4 requests in flight (each embeds its batch: minutes on a busy machine). */
async function ingest(node: BenchServer, key: string, size: number): Promise<number> {
  const rec = new Recorder();
  const elapsedS = await closedLoop({ concurrency: ingestConcurrency, calls: Math.ceil(size / batchSize) }, rec, async (i) => {
    const first = i * batchSize;
    const memories = Array.from({ length: Math.min(batchSize, size - first) }, (_, k) => ({ content: syntheticMemory(first + k), type: "fact", containers: [container] }));
    await postOrFail(`${node.url}/api/v1/agent/memories`, key, { memories });
  });
  if (rec.errors > 0) throw new Error(`ingest failed: ${JSON.stringify(rec.errorKinds)}`);
  return elapsedS;
}

/**
 * Waits until every job is indexed and the LanceDB indexes cover every row (the maintainer folds new rows
 * in once the queue has been idle for a while): rows outside them are searched by a scan.
 */
async function settle(databaseUrl: string, lanceDir: string): Promise<void> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const lance = await connect(lanceDir);
  try {
    for (;;) {
      const { rows } = await db.query<{ n: number }>("select count(*)::int as n from index_outbox where indexed_at is null");
      const table = await lance.openTable((await lance.tableNames()).find((t) => t.startsWith("memories_"))!);
      const indices = await table.listIndices();
      const unindexed = await Promise.all(indices.map(async (i) => (await table.indexStats(i.name))?.numUnindexedRows ?? 0));
      table.close();
      if (rows[0]!.n === 0 && indices.length > 0 && unindexed.every((n) => n === 0)) return;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  } finally {
    lance.close();
    await db.end();
  }
}

/** Records into itself and into `total`, which gathers every repeat of one row. */
class TeeRecorder extends Recorder {
  constructor(private readonly total: Recorder) {
    super();
  }
  override success(ms: number): void {
    super.success(ms);
    this.total.success(ms);
  }
  override failure(kind: string): void {
    super.failure(kind);
    this.total.failure(kind);
  }
}

const recallBody = (query: string, mode: Mode) => ({ query, searchMode: mode, limit: 10, containers: [container], includeReceipt: false });

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  stopAfter(options.timeoutS);
  const run = {
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? "unknown",
    node: process.version,
    loadAvg1mBefore: loadavg()[0]!,
    size: options.size,
    durationS: options.durationS,
    concurrency: options.concurrency,
    repeats: options.repeats,
    startedAt: new Date().toISOString(),
  };

  const databaseUrl = await benchDatabase(options.databaseUrl, "-c max_connections=200");
  const lanceDir = await mkdtemp(path.join(tmpdir(), "agentmem-bench-nodes-"));
  onCleanUp(() => rm(lanceDir, { recursive: true, force: true }));
  const env = { LANCEDB_URI: lanceDir, CONTRADICTIONS_ENABLED: "false" };

  console.error("starting node A…");
  const a = await startServer(databaseUrl, env);
  onCleanUp(a.stop);
  const key = await a.createKey("bench", container);
  console.error(`writing ${options.size} memories through node A…`);
  const ingestS = await ingest(a, key, options.size);
  console.error(`  ${(options.size / ingestS).toFixed(0)} memories/s accepted; waiting until they are indexed and folded…`);
  const settleStarted = performance.now();
  await settle(databaseUrl, lanceDir);
  const settleS = (performance.now() - settleStarted) / 1000;
  console.error(`  settled ${settleS.toFixed(0)} s after the last write was accepted`);
  console.error("starting node B…");
  const b = await startServer(databaseUrl, env);
  onCleanUp(b.stop);

  const queries = syntheticQueries(100_000);
  let next = 0;
  const fresh = () => {
    if (next >= queries.length) throw new Error("ran out of distinct queries");
    return queries[next++]!;
  };
  const targets: Record<Setup, BenchServer[]> = { "1 node": [a], "2 nodes": [a, b] };
  const phase = (mode: Mode, setup: Setup, rec: Recorder, durationS: number, concurrency: number) =>
    closedLoop({ concurrency, durationS }, rec, async (i) => {
      const nodes = targets[setup];
      await post(`${nodes[i % nodes.length]!.url}/api/v1/agent/recall`, key, recallBody(fresh(), mode));
    });

  // Both nodes' first recalls (model warm-up, LanceDB handles, caches) are not timed.
  for (const mode of modes) await phase(mode, "2 nodes", new Recorder(), warmupS, 2);

  const results: PhaseResult[] = [];
  for (const mode of modes) {
    const recorders = { "1 node": new Recorder(), "2 nodes": new Recorder() };
    const elapsed = { "1 node": 0, "2 nodes": 0 };
    for (let r = 0; r < options.repeats; r++) {
      for (const setup of setups) {
        const rec = new TeeRecorder(recorders[setup]);
        const s = await phase(mode, setup, rec, options.durationS, options.concurrency);
        elapsed[setup] += s;
        const part = rec.result({ phase: `recall ${mode}, ${setup}`, transport: "rest", dataSize: options.size, concurrency: options.concurrency }, s);
        console.error(`  ${part.phase} (repeat ${r + 1}): ${part.reqPerS.toFixed(1)} req/s, p50 ${part.p50Ms.toFixed(1)} p95 ${part.p95Ms.toFixed(1)} ms, ${part.errors} errors`);
      }
    }
    for (const setup of setups) {
      results.push(recorders[setup].result({ phase: `recall ${mode}, ${setup}`, transport: "rest", dataSize: options.size, concurrency: options.concurrency }, elapsed[setup]));
    }
  }

  const loadAvg1mAfter = loadavg()[0]!;
  const gain = (mode: Mode) => {
    const [one, two] = setups.map((s) => results.find((r) => r.phase === `recall ${mode}, ${s}`)!);
    return two!.reqPerS / one!.reqPerS;
  };
  const rows = [["mode", "nodes", "req/s", "p50 ms", "p95 ms", "p99 ms", "errors", "2 nodes / 1 node"]];
  for (const r of results) {
    const [mode, setup] = r.phase.replace("recall ", "").split(", ") as [Mode, Setup];
    rows.push([mode, setup, r.reqPerS.toFixed(1), r.p50Ms.toFixed(1), r.p95Ms.toFixed(1), r.p99Ms.toFixed(1), String(r.errors), setup === "2 nodes" ? `${gain(mode).toFixed(2)}x` : ""]);
  }
  console.log(
    [
      `several nodes: ${options.size} memories, PostgreSQL ${options.databaseUrl ? "server" : "throwaway cluster"} + one LanceDB directory`,
      `cores: ${run.cores}   cpu: ${run.cpu}   node: ${run.node}   load average (1 min) before/after: ${run.loadAvg1mBefore.toFixed(2)} / ${loadAvg1mAfter.toFixed(2)}`,
      `REST recall, closed loop at concurrency ${options.concurrency}, ${options.repeats} x ${options.durationS} s per row (alternating), a new query text every call`,
      `ingest through node A: ${(options.size / ingestS).toFixed(0)} memories/s accepted, indexed and folded ${settleS.toFixed(0)} s after the last`,
      "",
      alignedTable(rows, [0, 1]),
      "",
      `Note: each node runs its own embedding workers (EMBEDDING_WORKERS, default min(2, cores)); on ${run.cores} cores two nodes share the same CPU, so a second node adds what one node leaves idle, not its own cores.`,
      `Note: ${caveat}`,
    ].join("\n"),
  );
  await mkdir(path.dirname(resultsFile), { recursive: true });
  await writeFile(resultsFile, JSON.stringify({ run: { ...run, loadAvg1mAfter, ingestS, settleS, caveat }, results }, null, 2) + "\n");
  console.log(`\nwritten to ${resultsFile}`);
  const failing = results.filter((r) => r.errors > 0.01 * (r.ok + r.errors));
  for (const r of failing) console.error(`FAIL: ${r.phase} had ${r.errors} errors: ${JSON.stringify(r.errorKinds)}`);
  return failing.length > 0 ? 1 : 0;
}

runBench(main);
