// One container at scale: loads N memories through the server's own storage and index code, then starts the
// real server on that data and measures it over REST.
//
//   npx tsx bench/scale.ts [--sizes 100000,300000,1000000] [--backends postgres,pglite] [--duration 10]
//                          [--concurrency 8] [--load-limit-minutes 20] [--timeout 7200] [--database-url postgres://…]
//                          [--write-rate 2] [--mixed-duration 90] [--server-env NAME=value …]
//
// Load (in this process, sizes ascending, each size adding to the last): memories are built by
// bench/lib/scale-data.ts and written by insertMemories (src/memories/memory-store.ts: the statement every
// create runs, memories + first versions + indexing jobs) in batches of 1,000, with token counts from the
// server's counter and vectors from a hashing embedder (bench/lib/hashing-embedder.ts: microseconds a text,
// so the load measures storage and index, not the model). The jobs carry the vectors, as a create's do, and
// the server's indexer (src/search/indexer.ts, batches of 5,000) writes them to LanceDB while rows are still
// being inserted. Then the index is optimised (ANN, full-text and scalar indexes: VectorIndex.optimize) and
// the database vacuumed and analysed (db.maintain() on PGlite, what the server runs every 30 s; VACUUM
// (ANALYZE) on a server, whose autovacuum would do it in its own time). A load projected past --load-limit-minutes stops, and
// the projected time is reported from the rate reached.
//
// Measure (the server in a child process, as deployed, with the real query embedder, contradiction
// detection on): recall per mode at concurrency 1 with a query never sent before (the query embedding is
// in every number), hybrid at --concurrency, hybrid with each filter (type 1/6, tag 4%, metadata 0.125%, 0.5%, 2.5%
// and 25%, a 30-day creation window 8%; each filter's p50/p95 is also printed against unfiltered hybrid's;
// for each recall phase the CPU a recall costs, by where it goes, PostgreSQL's included, and this process's
// own as the load generator; at concurrency 8 also the rate at which the server's CPU alone fills the cores),
// list pages (first, deep by page token, filtered), get by id, single creates, and hybrid recall for
// --mixed-duration seconds while memories are created at --write-rate a second (the index folds new rows
// meanwhile; the server's CPU per second is printed by where it goes). Semantic results are latency only:
// the memories' vectors are hashes, the queries' the model's.
// Writes bench/results/scale.json.

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, cpus, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { caveat } from "./lib/report.js";
import { postOrFail } from "./lib/http-json.js";
import { restLoad } from "./lib/rest-load.js";
import { cpuBetween, postgresCpuMs, rssMb, serverCpuMs, type ServerCpuMs } from "./lib/process-tree.js";
import { onCleanUp, positiveOption, runBench, stopAfter } from "./lib/run.js";
import { countMemories, load1m, loadTo, type Backend, type LoadResult, type Store } from "./lib/scale-load.js";
import { benchDatabase } from "./lib/scratch-database.js";
import { startServer, type BenchServer } from "./lib/server.js";
import { Recorder, type PhaseResult } from "./lib/stats.js";
import { syntheticQueries } from "./lib/synthetic.js";
import { alignedTable } from "./lib/table.js";

const container = "bench-1";
const limit = 10;
const dayMs = 24 * 3600 * 1000;


interface Options {
  sizes: number[];
  backends: Backend[];
  durationS: number;
  concurrency: number;
  loadLimitS: number;
  timeoutS: number;
  databaseUrl: string | undefined;
  /** Memories created a second during the mixed phase, and its length. */
  writeRate: number;
  mixedDurationS: number;
  /** Added to the server's environment, e.g. to compare a setting. */
  serverEnv: Record<string, string>;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: "string", default: "100000" },
      backends: { type: "string", default: "postgres,pglite" },
      duration: { type: "string", default: "10" },
      concurrency: { type: "string", default: "8" },
      "load-limit-minutes": { type: "string", default: "20" },
      timeout: { type: "string", default: "7200" },
      "database-url": { type: "string" },
      "write-rate": { type: "string", default: "2" },
      "mixed-duration": { type: "string", default: "90" },
      "server-env": { type: "string", multiple: true, default: [] },
    },
  });
  const backends = values.backends.split(",").map((b) => b.trim());
  for (const b of backends) if (b !== "postgres" && b !== "pglite") throw new Error(`--backends: unknown backend "${b}"`);
  return {
    sizes: values.sizes
      .split(",")
      .map((s) => positiveOption("sizes", s.trim()))
      .sort((a, b) => a - b),
    backends: backends as Backend[],
    durationS: positiveOption("duration", values.duration),
    concurrency: positiveOption("concurrency", values.concurrency),
    loadLimitS: 60 * positiveOption("load-limit-minutes", values["load-limit-minutes"]),
    timeoutS: positiveOption("timeout", values.timeout),
    databaseUrl: values["database-url"],
    writeRate: positiveOption("write-rate", values["write-rate"]),
    mixedDurationS: positiveOption("mixed-duration", values["mixed-duration"]),
    serverEnv: Object.fromEntries(
      values["server-env"].map((pair) => {
        const eq = pair.indexOf("=");
        if (eq < 1) throw new Error(`--server-env must be NAME=value, got "${pair}"`);
        return [pair.slice(0, eq), pair.slice(eq + 1)];
      }),
    ),
  };
}

interface Measure {
  server: BenchServer;
  key: string;
  size: number;
  options: Options;
  nextQuery: () => string;
}

interface Phase extends PhaseResult {
  loadAvg1m: number;
  /** The server's CPU ms per second of the phase, by where it went (the mixed phase only). */
  serverCpuMsPerS?: ServerCpuMs;
  /**
   * CPU ms a call, by where it went (the recall phases); postgres: all PostgreSQL processes on the machine;
   * client: this process (the load generator), which shares the machine's cores with the server.
   */
  cpuMsPerCall?: ServerCpuMs & { postgres: number; client: number };
  written?: number;
}

async function phase(m: Measure, name: string, concurrency: number, request: (i: number) => { method: "GET" | "POST"; path: string; body?: string }, durationS = m.options.durationS): Promise<Phase> {
  const rec = new Recorder();
  const elapsedS = await restLoad({ url: m.server.url, key: m.key, connections: concurrency, durationS, request }, rec);
  const r = { ...rec.result({ phase: name, transport: "rest", dataSize: m.size, concurrency }, elapsedS), loadAvg1m: load1m() };
  console.error(`  ${name} c${concurrency} @${m.size}: ${r.reqPerS.toFixed(1)}/s, p50 ${r.p50Ms.toFixed(1)} p95 ${r.p95Ms.toFixed(1)} ms, ${r.errors} errors, load ${r.loadAvg1m}`);
  return r;
}

const recall = (m: Measure, mode: string, filter: Record<string, unknown> = {}) => () => ({
  method: "POST" as const,
  path: "/api/v1/agent/recall",
  body: JSON.stringify({ query: m.nextQuery(), searchMode: mode, limit, containers: [container], includeReceipt: false, ...filter }),
});

async function getJson(m: Measure, route: string): Promise<any> {
  const res = await fetch(m.server.url + route, { headers: { authorization: `Bearer ${m.key}` }, signal: AbortSignal.timeout(60_000) });
  if (!res.ok) throw new Error(`GET ${route}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

/** Walks `pages` list pages by their tokens, one at a time; returns the latencies and the ids seen. */
async function walkPages(m: Measure, query: string, pages: number): Promise<{ phase: Phase; ids: string[] }> {
  const rec = new Recorder();
  const ids: string[] = [];
  let token: string | undefined;
  const t0 = performance.now();
  for (let p = 0; p < pages; p++) {
    const t = performance.now();
    const body = await getJson(m, `/api/v1/agent/memories?${query}${token ? `&pageToken=${encodeURIComponent(token)}` : ""}`);
    rec.success(performance.now() - t);
    for (const memory of body.memories) ids.push(memory.id);
    token = body.nextPageToken;
    if (!token) break;
  }
  const r = { ...rec.result({ phase: `list pages 1-${pages} by token (${query})`, transport: "rest", dataSize: m.size, concurrency: 1 }, (performance.now() - t0) / 1000), loadAvg1m: load1m() };
  console.error(`  ${r.phase} @${m.size}: p50 ${r.p50Ms.toFixed(1)} p95 ${r.p95Ms.toFixed(1)} ms`);
  return { phase: r, ids };
}

const createBody = (m: Measure, i: number, label: string) => ({ content: `Scale bench note ${m.size}-${label}${i}: ${m.nextQuery()}`, type: "fact", containers: [container] });

/** Hybrid recall at concurrency 1 while a writer creates memories at a steady rate, one at a time. */
async function recallWhileWriting(m: Measure): Promise<Phase> {
  const { writeRate, mixedDurationS } = m.options;
  let stopped = false;
  let written = 0;
  const writer = (async () => {
    const started = performance.now();
    for (let i = 0; !stopped; i++) {
      const wait = started + (i * 1000) / writeRate - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (stopped) break;
      await postOrFail(m.server.url + "/api/v1/agent/memories", m.key, createBody(m, i, "mixed-"));
      written++;
    }
  })();
  const before = serverCpuMs(m.server.pid);
  const t0 = performance.now();
  let p: Phase;
  try {
    p = await phase(m, `recall hybrid while ${writeRate} memories/s are created`, 1, recall(m, "hybrid"), mixedDurationS);
  } finally {
    stopped = true;
    await writer;
  }
  const cpu = cpuBetween(before, serverCpuMs(m.server.pid), (performance.now() - t0) / 1000, 0);
  console.error(`    server CPU ms/s: main ${cpu.main}, LanceDB ${cpu.lancedb}, other threads ${cpu.other}, model ${cpu.children}; ${written} memories created`);
  return { ...p, serverCpuMsPerS: cpu, written };
}

/** Runs a phase and adds where its CPU went, per successful call. */
async function withCpuPerCall(m: Measure, run: () => Promise<Phase>): Promise<Phase> {
  const server = serverCpuMs(m.server.pid);
  const postgres = postgresCpuMs();
  const client = process.cpuUsage();
  const p = await run();
  const calls = Math.max(p.ok, 1);
  const clientUsage = process.cpuUsage(client);
  const perCall = (ms: number) => Number((ms / calls).toFixed(2));
  const cpu = {
    ...cpuBetween(server, serverCpuMs(m.server.pid), calls, 2),
    postgres: perCall(postgresCpuMs() - postgres),
    client: perCall((clientUsage.user + clientUsage.system) / 1000),
  };
  console.error(
    `    CPU ms a call: main ${cpu.main}, LanceDB ${cpu.lancedb}, other threads ${cpu.other}, model ${cpu.children}, PostgreSQL ${cpu.postgres}; ` +
      `server in all ${serverCpuPerCall(cpu).toFixed(2)}, client ${cpu.client}`,
  );
  return { ...p, cpuMsPerCall: cpu };
}

/** The server's CPU ms a call: its threads, its model processes and PostgreSQL. */
const serverCpuPerCall = (c: NonNullable<Phase["cpuMsPerCall"]>) => c.main + c.lancedb + c.other + c.children + c.postgres;

async function measure(m: Measure, now: number): Promise<Phase[]> {
  const out: Phase[] = [];
  // Untimed warm-up: caches, JIT, the index files.
  await phase(m, "warm-up", 2, recall(m, "hybrid"), 3);
  for (const mode of ["semantic", "keyword", "hybrid"]) out.push(await withCpuPerCall(m, () => phase(m, `recall ${mode}`, 1, recall(m, mode))));
  out.push(await withCpuPerCall(m, () => phase(m, "recall hybrid", m.options.concurrency, recall(m, "hybrid"))));
  const window = { createdAfter: new Date(now - 90 * dayMs).toISOString(), createdBefore: new Date(now - 60 * dayMs).toISOString() };
  const filters: Array<[string, Record<string, unknown>]> = [
    ["type fact (1/6)", { types: ["fact"] }],
    ["tag tag-7 (4%)", { tags: ["tag-7"] }],
    ["metadata shard 7 (0.5%)", { metadata: { shard: 7 } }],
    ["metadata shard 7, tier 1 (0.125%)", { metadata: { shard: 7, tier: 1 } }],
    ["metadata project-3 (2.5%)", { metadata: { project: "project-3" } }],
    ["metadata tier 1 (25%)", { metadata: { tier: 1 } }],
    ["30-day window (8%)", window],
  ];
  const unfiltered = out.find((p) => p.phase === "recall hybrid" && p.concurrency === 1)!;
  for (const [name, filter] of filters) {
    const p = await withCpuPerCall(m, () => phase(m, `recall hybrid, ${name}`, 1, recall(m, "hybrid", filter)));
    console.error(`    against unfiltered hybrid: p50 ${(p.p50Ms / unfiltered.p50Ms).toFixed(2)}x, p95 ${(p.p95Ms / unfiltered.p95Ms).toFixed(2)}x`);
    out.push(p);
  }
  const list = (query: string) => () => ({ method: "GET" as const, path: `/api/v1/agent/memories?${query}` });
  out.push(await phase(m, "list first page (50)", 1, list("pageSize=50")));
  out.push(await phase(m, "list first page, type + tag", 1, list("pageSize=50&types=fact&tags=tag-7")));
  out.push(await phase(m, "list first page, metadata", 1, list(`pageSize=50&metadata=${encodeURIComponent(JSON.stringify({ project: "project-3" }))}`)));
  const walked = await walkPages(m, "pageSize=50", 100);
  out.push(walked.phase);
  const ids = walked.ids;
  out.push(await phase(m, "get by id", 1, (i) => ({ method: "GET", path: `/api/v1/agent/memories/${ids[(i * 7919) % ids.length]}` })));
  out.push(
    await phase(m, "create one memory (embeds, detects contradictions)", 1, (i) => ({ method: "POST", path: "/api/v1/agent/memories", body: JSON.stringify(createBody(m, i, "")) })),
  );
  out.push(await recallWhileWriting(m));
  return out;
}

interface SizeResult {
  backend: Backend;
  requestedSize: number;
  size: number;
  load: LoadResult;
  serverStartS: number;
  serverRssMbIdle: number;
  serverRssMbAfter: number;
  phases: Phase[];
}

async function runBackend(backend: Backend, options: Options, queries: () => string): Promise<SizeResult[]> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `agentmem-scale-${backend}-`));
  onCleanUp(() => rm(dataDir, { recursive: true, force: true }));
  const databaseUrl = backend === "postgres" ? await benchDatabase(options.databaseUrl, "-c shared_buffers=256MB -c max_wal_size=4GB") : undefined;
  const store: Store = { backend, dataDir, databaseUrl, now: Date.now(), stored: 0 };
  const results: SizeResult[] = [];
  for (const requested of options.sizes) {
    console.error(`${backend}: loading to ${requested} memories…`);
    const load = await loadTo(store, requested, options.loadLimitS, container);
    console.error(
      `  loaded ${load.loaded - load.from} in ${load.totalS.toFixed(0)} s (${load.memoriesPerS.toFixed(0)}/s; inserts ${load.insertS.toFixed(0)} s, ` +
        `indexed ${load.indexedS.toFixed(0)} s, optimize ${load.optimizeS.toFixed(0)} s, analyse ${load.analyseS.toFixed(0)} s), load ${load.loadAvg1m}`,
    );
    const t0 = performance.now();
    const server = await startServer(databaseUrl, { DATA_DIR: dataDir, ...options.serverEnv });
    const serverStartS = (performance.now() - t0) / 1000;
    try {
      const key = await server.createKey("bench", container);
      const serverRssMbIdle = rssMb(server.pid);
      const phases = await measure({ server, key, size: store.stored, options, nextQuery: queries }, store.now);
      results.push({ backend, requestedSize: requested, size: store.stored, load, serverStartS, serverRssMbIdle, serverRssMbAfter: rssMb(server.pid), phases });
    } finally {
      await server.stop();
    }
    // The server's creates are part of the data from now on.
    store.stored = await countMemories(store);
    if (load.projectedMinutes !== undefined) break;
  }
  return results;
}

const ms = (v: number) => (Number.isNaN(v) ? "-" : v.toFixed(1));

function report(results: SizeResult[]): string {
  const loadRows = [["backend", "size", "loaded", "total s", "mem/s", "inserts s", "indexed s", "optimize s", "analyse s", "projected min", "server start s", "RSS idle MB", "RSS after MB", "load avg"]];
  for (const r of results) {
    const l = r.load;
    loadRows.push([
      r.backend,
      String(r.size),
      String(l.loaded - l.from),
      l.totalS.toFixed(0),
      l.memoriesPerS.toFixed(0),
      l.insertS.toFixed(0),
      l.indexedS.toFixed(0),
      l.optimizeS.toFixed(0),
      l.analyseS.toFixed(0),
      l.projectedMinutes === undefined ? "" : l.projectedMinutes.toFixed(1),
      r.serverStartS.toFixed(1),
      String(r.serverRssMbIdle),
      String(r.serverRssMbAfter),
      String(l.loadAvg1m),
    ]);
  }
  const phaseRows = [["backend", "size", "phase", "conc", "req/s", "p50 ms", "p95 ms", "p99 ms", "calls", "errors", "load avg"]];
  const cpuRows = [["backend", "size", "created", "main thread", "LanceDB", "other threads", "model"]];
  const cores = availableParallelism();
  const perCallRows = [["backend", "size", "phase", "conc", "main thread", "LanceDB", "other threads", "model", "PostgreSQL", "server in all", "client", `calls/s on ${cores} cores`]];
  for (const r of results) {
    for (const p of r.phases) {
      phaseRows.push([r.backend, String(r.size), p.phase, String(p.concurrency), p.reqPerS.toFixed(1), ms(p.p50Ms), ms(p.p95Ms), ms(p.p99Ms), String(p.ok), String(p.errors), String(p.loadAvg1m)]);
      const cpu = p.serverCpuMsPerS;
      if (cpu) cpuRows.push([r.backend, String(r.size), String(p.written), String(cpu.main), String(cpu.lancedb), String(cpu.other), String(cpu.children)]);
      const c = p.cpuMsPerCall;
      if (c) {
        const server = serverCpuPerCall(c);
        perCallRows.push([r.backend, String(r.size), p.phase, String(p.concurrency), ...[c.main, c.lancedb, c.other, c.children, c.postgres].map(String), server.toFixed(2), String(c.client), p.concurrency >= cores ? ((cores * 1000) / server).toFixed(0) : ""]);
      }
    }
  }
  return [
    "Load (insertMemories in batches of 1,000 + the indexer; hashed vectors; then optimize and analyse) and the server on it:",
    alignedTable(loadRows, [0]),
    "",
    `REST phases, limit ${limit}, one container; every recall a query never sent before (the real query embedding is in every number):`,
    alignedTable(phaseRows, [0, 2]),
    "",
    "The server's CPU (ms a second) while recalling and writing:",
    alignedTable(cpuRows, [0]),
    "",
    "CPU ms a recall by where it goes (PostgreSQL: every PostgreSQL process on this machine; PGlite runs in the main thread; client: this",
    "process, the load generator, on the same cores), and at a concurrency of at least the cores, the recalls a second the server's CPU",
    "alone would fill them with:",
    alignedTable(perCallRows, [0, 2]),
    "",
    `Note: ${caveat}`,
  ].join("\n");
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  stopAfter(options.timeoutS);
  const startedAt = new Date().toISOString();
  const run = { cores: availableParallelism(), cpu: cpus()[0]?.model ?? "unknown", node: process.version, loadAvg1m: load1m(), startedAt, ...options };
  const all = syntheticQueries(60_000);
  let q = 0;
  const nextQuery = () => {
    if (q >= all.length) throw new Error("ran out of distinct queries");
    return all[q++]!;
  };
  const results: SizeResult[] = [];
  for (const backend of options.backends) results.push(...(await runBackend(backend, options, nextQuery)));
  console.log(report(results));
  const file = fileURLToPath(new URL("results/scale.json", import.meta.url));
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ run: { ...run, loadAvg1mAfter: load1m(), caveat }, results }, null, 2) + "\n");
  console.log(`\nwritten to ${file}`);
  const failing = results.flatMap((r) => r.phases).filter((p) => p.errors > 0);
  for (const p of failing) console.error(`FAIL: ${p.phase} had ${p.errors} errors: ${JSON.stringify(p.errorKinds)}`);
  return failing.length > 0 ? 1 : 0;
}

runBench(main);
