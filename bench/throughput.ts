// Throughput of memory create and get over REST and gRPC, against the real server in a child process.
//
//   npm run bench -- [--duration 10] [--connections 32] [--sizes 1000,50000]
//                    [--database-url postgres://user@host/db] [--timeout 600]
//
// Order: for each data size, seed up to it with batches of 100 and wait until the indexer has written them
// (its embedding and index writes would otherwise share the cores with the phases after; not with
// INDEXER_ENABLED=false, where nothing indexes), then time get over REST and gRPC; then time create (REST,
// gRPC) and batch create (REST). Writes come last so the get phases see exactly the seeded sizes. Results
// are printed and written to bench/results/throughput-<backend>.json.

import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { CallFailure, closedLoop } from "./lib/closed-loop.js";
import { memoryInput } from "./lib/content.js";
import { memoryGrpcClient, type MemoryGrpc } from "./lib/grpc.js";
import { postJson } from "./lib/http-json.js";
import { formatTable, runInfoOf, writeJson } from "./lib/report.js";
import { restLoad, type RestLoad } from "./lib/rest-load.js";
import { scratchDatabase } from "./lib/scratch-database.js";
import { untilIndexed } from "./lib/server-metrics.js";
import { startServer, type BenchServer } from "./lib/server.js";
import { Recorder, type PhaseInfo, type PhaseResult } from "./lib/stats.js";
import { onCleanUp, positiveOption, runBench, stopAfter } from "./lib/run.js";

const batchSize = 100; // the server's maximum
const warmupS = 3;
const maxErrorRate = 0.01;
const memoriesPath = "/api/v1/agent/memories";
/** The server inherits this environment: with INDEXER_ENABLED=false its backlog never empties. */
const indexing = process.env.INDEXER_ENABLED !== "false";

interface Options {
  durationS: number;
  connections: number;
  sizes: number[];
  databaseUrl: string | undefined;
  timeoutS: number;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: "string", default: "10" },
      connections: { type: "string", default: "32" },
      sizes: { type: "string", default: "1000,50000" },
      "database-url": { type: "string" },
      timeout: { type: "string", default: "600" },
    },
  });
  return {
    durationS: positiveOption("duration", values.duration),
    connections: positiveOption("connections", values.connections),
    sizes: values.sizes
      .split(",")
      .map((s) => positiveOption("sizes", s.trim()))
      .sort((a, b) => a - b),
    databaseUrl: values["database-url"] ?? (process.env.BENCH_DATABASE_URL || undefined),
    timeoutS: positiveOption("timeout", values.timeout),
  };
}

/** Everything a phase needs: where to send load, and the data stored so far. */
interface Bench {
  options: Options;
  server: BenchServer;
  key: string;
  grpc: MemoryGrpc;
  /** Memories stored in the database. */
  stored: number;
  /** IDs of the seeded memories, in random order, for the get phases. */
  ids: string[];
}

const info = (b: Bench, phase: string, transport: PhaseInfo["transport"]): PhaseInfo => ({
  phase,
  transport,
  dataSize: b.stored,
  concurrency: b.options.connections,
});

const grpcInput = (i: number) => ({ ...memoryInput(i), type: "MEMORY_TYPE_FACT" });
const batchBody = (first: number, n: number) =>
  JSON.stringify({ memories: Array.from({ length: n }, (_, k) => memoryInput(first + k)) });

/** A timed REST phase: `connections` keep-alive connections sending the i-th request for `durationS`. */
const timedRest = (b: Bench, rec: Recorder, request: RestLoad["request"]) =>
  restLoad({ url: b.server.url, key: b.key, connections: b.options.connections, durationS: b.options.durationS, request }, rec);

/** A timed gRPC phase: as many calls in flight on one channel as REST has connections. */
const timedGrpc = (b: Bench, rec: Recorder, call: (i: number) => Promise<unknown>) =>
  closedLoop({ concurrency: b.options.connections, durationS: b.options.durationS }, rec, async (i) => void (await call(i)));

/** Stores memories in batches until `target` are stored, keeping their IDs. Bounded by count, not time. */
async function seedTo(b: Bench, target: number): Promise<PhaseResult> {
  const rec = new Recorder();
  const phase = info(b, `seed to ${target} (batch)`, "rest");
  const from = b.stored;
  const seeded: string[] = [];
  const calls = Math.ceil((target - from) / batchSize);
  const elapsedS = await closedLoop({ concurrency: b.options.connections, calls }, rec, async (i) => {
    const first = from + i * batchSize;
    const res = await postJson(b.server.url + memoriesPath, b.key, batchBody(first, Math.min(batchSize, target - first)));
    if (res.status < 200 || res.status >= 300) throw new CallFailure(`HTTP ${res.status}`);
    seeded.push(...(res.body as { ids: string[] }).ids);
  });
  b.stored += seeded.length;
  b.ids = shuffle([...b.ids, ...seeded]);
  return rec.result(phase, elapsedS, seeded.length);
}

async function restGet(b: Bench): Promise<PhaseResult> {
  const rec = new Recorder();
  const phase = info(b, "get", "rest");
  const { ids } = b;
  const elapsedS = await timedRest(b, rec, (i) => ({ method: "GET", path: `${memoriesPath}/${ids[i % ids.length]}` }));
  return rec.result(phase, elapsedS);
}

async function grpcGet(b: Bench): Promise<PhaseResult> {
  const rec = new Recorder();
  const phase = info(b, "get", "grpc");
  const { ids } = b;
  const elapsedS = await timedGrpc(b, rec, (i) => b.grpc.getMemory({ id: ids[i % ids.length] }));
  return rec.result(phase, elapsedS);
}

async function restCreate(b: Bench): Promise<PhaseResult> {
  const rec = new Recorder();
  const phase = info(b, "create", "rest");
  const { stored } = b;
  const elapsedS = await timedRest(b, rec, (i) => ({
    method: "POST",
    path: memoriesPath,
    body: JSON.stringify(memoryInput(stored + i)),
  }));
  b.stored += rec.ok;
  return rec.result(phase, elapsedS, rec.ok);
}

async function grpcCreate(b: Bench): Promise<PhaseResult> {
  const rec = new Recorder();
  const phase = info(b, "create", "grpc");
  const { stored } = b;
  const elapsedS = await timedGrpc(b, rec, (i) => b.grpc.createMemories(grpcInput(stored + i)));
  b.stored += rec.ok;
  return rec.result(phase, elapsedS, rec.ok);
}

async function restBatchCreate(b: Bench): Promise<PhaseResult> {
  const rec = new Recorder();
  const phase = info(b, `batch create (${batchSize})`, "rest");
  const { stored } = b;
  const elapsedS = await timedRest(b, rec, (i) => ({
    method: "POST",
    path: memoriesPath,
    body: batchBody(stored + i * batchSize, batchSize),
  }));
  b.stored += rec.ok * batchSize;
  return rec.result(phase, elapsedS, rec.ok * batchSize);
}

/** Untimed reads over both transports, so the first timed phase does not measure the JIT warming up. */
async function warmUp(b: Bench): Promise<void> {
  const short = { ...b, options: { ...b.options, durationS: warmupS } };
  await Promise.all([restGet(short), grpcGet(short)]);
}

/** Runs the phases in order, reporting each on stderr as it ends. */
async function runPhases(b: Bench): Promise<PhaseResult[]> {
  const results: PhaseResult[] = [];
  const run = async (phase: (b: Bench) => Promise<PhaseResult>) => {
    const r = await phase(b);
    const summary = `${r.reqPerS.toFixed(0)} req/s, p99 ${r.p99Ms.toFixed(1)} ms, ${r.errors} errors`;
    console.error(`  ${r.phase} ${r.transport} @${r.dataSize}: ${summary} (${r.durationS.toFixed(1)} s)`);
    results.push(r);
  };
  for (const [n, size] of b.options.sizes.entries()) {
    if (size > b.stored) {
      await run((b) => seedTo(b, size));
      if (indexing) console.error(`  indexed ${b.stored} memories ${(await untilIndexed(b.server)).toFixed(1)} s after the seed`);
    }
    if (n === 0) await warmUp(b);
    await run(restGet);
    await run(grpcGet);
  }
  await run(restCreate);
  await run(grpcCreate);
  await run(restBatchCreate);
  return results;
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

// Resources to release on every exit path, newest first: gRPC client, server, scratch database.
async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  stopAfter(options.timeoutS);

  const run = runInfoOf(options);
  const { backend } = run;
  const database = options.databaseUrl ? await scratchDatabase(options.databaseUrl) : undefined;
  if (database) onCleanUp(database.drop);
  console.error(`starting the server (${backend})…`);
  const server = await startServer(database?.url);
  onCleanUp(server.stop);
  const key = await server.createKey("bench", "agent-1");
  const grpc = memoryGrpcClient(server.url, key);
  onCleanUp(() => grpc.close());

  const results = await runPhases({ options, server, key, grpc, stored: 0, ids: [] });

  console.log(formatTable(run, results));
  const file = fileURLToPath(new URL(`results/throughput-${backend}.json`, import.meta.url));
  await writeJson(file, run, results);
  console.log(`\nwritten to ${file}`);

  const failing = results.filter((r) => r.errors > maxErrorRate * (r.ok + r.errors));
  for (const r of failing) {
    console.error(`FAIL: ${r.phase} (${r.transport}) had ${r.errors} errors in ${r.ok + r.errors} calls`);
  }
  return failing.length > 0 ? 1 : 0;
}

runBench(main);
