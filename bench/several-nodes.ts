// Recall throughput of one node against two nodes behind a round-robin client.
//
//   npx tsx bench/several-nodes.ts [--size 10000] [--duration 15] [--concurrency 8] [--repeats 2]
//                                  [--object-storage] [--database-url postgres://…] [--timeout 1800]
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
//
// --object-storage puts the LanceDB index in a bucket of a local S3-compatible server (s3rver) instead of
// a directory, so only the maintainer (node A) writes it (LANCEDB_WRITERS=maintainer), and adds the delay
// from a write acknowledged by node B to its recall on node A and to its job being written to the index
// by node A; results go to bench/results/several-nodes-object-storage.json.

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
import { startS3Server } from "../test/support/s3-server.js";

const resultsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "results");
const container = "bench-1";
const batchSize = 100;
const ingestConcurrency = 4;
const modes = ["hybrid", "keyword"] as const;
type Mode = (typeof modes)[number];
const setups = ["1 node", "2 nodes"] as const;
type Setup = (typeof setups)[number];
const warmupS = 3;
/** Writes whose cross-node delays --object-storage measures, and how long each may take to show. */
const delaySamples = 10;
const delayDeadlineMs = 60_000;

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      size: { type: "string", default: "10000" },
      duration: { type: "string", default: "15" },
      concurrency: { type: "string", default: "8" },
      repeats: { type: "string", default: "2" },
      "object-storage": { type: "boolean", default: false },
      "database-url": { type: "string" },
      timeout: { type: "string", default: "1800" },
    },
  });
  return {
    size: positiveOption("size", values.size),
    durationS: positiveOption("duration", values.duration),
    concurrency: positiveOption("concurrency", values.concurrency),
    repeats: positiveOption("repeats", values.repeats),
    objectStorage: values["object-storage"],
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

/** Where the nodes' LanceDB index lives: a directory, or a bucket of a local S3-compatible server. */
interface LanceSite {
  uri: string;
  storageOptions: Record<string, string>;
  /** The nodes' settings for it. */
  env: Record<string, string>;
}

async function lanceSite(objectStorage: boolean): Promise<LanceSite> {
  if (objectStorage) {
    const s3 = await startS3Server();
    onCleanUp(s3.close);
    const uri = `s3://${s3.bucket}/agentmem`;
    return { uri, storageOptions: s3.storageOptions, env: { LANCEDB_URI: uri, ...s3.env } };
  }
  const dir = await mkdtemp(path.join(tmpdir(), "agentmem-bench-nodes-"));
  onCleanUp(() => rm(dir, { recursive: true, force: true }));
  return { uri: dir, storageOptions: {}, env: { LANCEDB_URI: dir } };
}

/**
 * Waits until every job is indexed and the LanceDB indexes cover every row (the maintainer folds new rows
 * in once the queue has been idle for a while): rows outside them are searched by a scan.
 */
async function settle(databaseUrl: string, site: LanceSite): Promise<void> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const lance = await connect(site.uri, { storageOptions: site.storageOptions });
  // Opened by name: an S3-compatible server may answer no listing by delimiter, which tableNames() needs.
  const { rows: state } = await db.query<{ dimensions: number }>("select dimensions from vector_index_state");
  try {
    for (;;) {
      const { rows } = await db.query<{ n: number }>("select count(*)::int as n from index_outbox where indexed_at is null");
      const table = await lance.openTable(`memories_v2_${state[0]!.dimensions}`);
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

/** Milliseconds until `probe` holds, polled every 5 ms; undefined if it does not within delayDeadlineMs. */
async function msUntil(probe: () => Promise<boolean>): Promise<number | undefined> {
  const started = performance.now();
  while (!(await probe())) {
    if (performance.now() - started > delayDeadlineMs) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return performance.now() - started;
}

/**
 * `samples` writes through `writer`, one at a time: how long after each was acknowledged a semantic recall
 * on `reader` returned it among its first ten, and how long until its job was written to the index.
 */
async function crossNodeDelays(writer: BenchServer, reader: BenchServer, key: string, databaseUrl: string, samples: number) {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const recalled = new Recorder();
  const indexed = new Recorder();
  const record = (rec: Recorder, ms: number | undefined) => (ms === undefined ? rec.failure("deadline") : rec.success(ms));
  const probes = syntheticQueries(samples, 11);
  try {
    for (const [i, query] of probes.entries()) {
      const content = `Cross-node probe ${i}: ${query}`;
      const written = (await post(`${writer.url}/api/v1/agent/memories`, key, { content, type: "fact", containers: [container] })) as { ids: string[] };
      const id = written.ids[0]!;
      const acknowledged = performance.now();
      record(
        recalled,
        await msUntil(async () => {
          const found = (await post(`${reader.url}/api/v1/agent/recall`, key, recallBody(content, "semantic"))) as { memories: Array<{ id: string }> };
          return found.memories.some((m) => m.id === id);
        }),
      );
      const done = await msUntil(async () => (await db.query("select 1 from index_outbox where memory_id = $1 and indexed_at is null", [id])).rowCount === 0);
      record(indexed, done === undefined ? undefined : performance.now() - acknowledged);
    }
  } finally {
    await db.end();
  }
  const info = (phase: string) => ({ phase, transport: "rest" as const, dataSize: samples, concurrency: 1 });
  return [recalled.result(info("write on B, recalled on A"), 1), indexed.result(info("write on B, indexed by A"), 1)];
}

const recallBody = (query: string, mode: Mode | "semantic") => ({ query, searchMode: mode, limit: 10, containers: [container], includeReceipt: false });

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  stopAfter(options.timeoutS);
  const run = {
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? "unknown",
    node: process.version,
    loadAvg1mBefore: loadavg()[0]!,
    size: options.size,
    objectStorage: options.objectStorage,
    durationS: options.durationS,
    concurrency: options.concurrency,
    repeats: options.repeats,
    startedAt: new Date().toISOString(),
  };

  const databaseUrl = await benchDatabase(options.databaseUrl, "-c max_connections=200");
  const site = await lanceSite(options.objectStorage);
  const env = { ...site.env, CONTRADICTIONS_ENABLED: "false" };

  console.error("starting node A…");
  const a = await startServer(databaseUrl, env);
  onCleanUp(a.stop);
  const key = await a.createKey("bench", container);
  console.error(`writing ${options.size} memories through node A…`);
  const ingestS = await ingest(a, key, options.size);
  console.error(`  ${(options.size / ingestS).toFixed(0)} memories/s accepted; waiting until they are indexed and folded…`);
  const settleStarted = performance.now();
  await settle(databaseUrl, site);
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

  const delays = options.objectStorage ? await crossNodeDelays(b, a, key, databaseUrl, delaySamples) : [];
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
      `several nodes: ${options.size} memories, PostgreSQL ${options.databaseUrl ? "server" : "throwaway cluster"} + one LanceDB ${options.objectStorage ? "bucket (s3rver on loopback; only node A writes it)" : "directory"}`,
      `cores: ${run.cores}   cpu: ${run.cpu}   node: ${run.node}   load average (1 min) before/after: ${run.loadAvg1mBefore.toFixed(2)} / ${loadAvg1mAfter.toFixed(2)}`,
      `REST recall, closed loop at concurrency ${options.concurrency}, ${options.repeats} x ${options.durationS} s per row (alternating), a new query text every call`,
      `ingest through node A: ${(options.size / ingestS).toFixed(0)} memories/s accepted, indexed and folded ${settleS.toFixed(0)} s after the last`,
      "",
      alignedTable(rows, [0, 1]),
      "",
      ...(delays.length > 0
        ? [
            alignedTable([["delay", "samples", "p50 ms", "p95 ms", "max ms", "not within 60 s"], ...delays.map((d) => [d.phase, String(d.ok), d.p50Ms.toFixed(0), d.p95Ms.toFixed(0), d.p99Ms.toFixed(0), String(d.errors)])], [0]),
            "",
          ]
        : []),
      `Note: each node runs its own embedding workers (EMBEDDING_WORKERS, default min(2, cores)); on ${run.cores} cores two nodes share the same CPU, so a second node adds what one node leaves idle, not its own cores.`,
      `Note: ${caveat}`,
    ].join("\n"),
  );
  const resultsFile = path.join(resultsDir, options.objectStorage ? "several-nodes-object-storage.json" : "several-nodes.json");
  await mkdir(resultsDir, { recursive: true });
  await writeFile(resultsFile, JSON.stringify({ run: { ...run, loadAvg1mAfter, ingestS, settleS, caveat }, results, delays }, null, 2) + "\n");
  console.log(`\nwritten to ${resultsFile}`);
  const failing = results.filter((r) => r.errors > 0.01 * (r.ok + r.errors));
  for (const r of failing) console.error(`FAIL: ${r.phase} had ${r.errors} errors: ${JSON.stringify(r.errorKinds)}`);
  return failing.length > 0 ? 1 : 0;
}

runBench(main);
