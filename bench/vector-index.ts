// Vector index benchmark: both backends at 10k and 100k rows of 512-d random unit vectors in one container.
//
//   npx tsx bench/vector-index.ts [--sizes 10000,100000] [--load-cap-s 150]
//
// Each backend and size runs in its own child process, so RSS belongs to that run alone. Per run: upsert
// rate (batches of 1,000), then search latency (k = 10, container filter) before and after optimize(),
// recall@10 against an exact scan done here, and RSS. pgvector runs on PGlite (pgvector is not packaged
// for the local PostgreSQL). A load stops at --load-cap-s (the table says how many rows it reached), and a
// size whose load the smaller run's rate projects past the cap is skipped and listed as such.
// Results are printed and written to bench/results/vector-index.json.

import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { openPglite } from "../src/db/pglite.js";
import { openLanceIndex } from "../src/search/vector/lancedb-index.js";
import { openPgvectorIndex } from "../src/search/vector/pgvector-index.js";
import type { VectorFilter, VectorIndex, VectorRecord } from "../src/search/vector/vector-index.js";
import { factRecord } from "./lib/fact-record.js";
import { prng } from "./lib/synthetic.js";

const dims = 512;
const batchSize = 1000;
const k = 10;
const recallQueries = 20;
/** Search phases run this many queries, or fewer when they pass the time budget. */
const maxQueries = 200;
const phaseBudgetMs = 15_000;
const filter: VectorFilter = { workspaceId: "ws_bench", containers: ["main"] };
const self = fileURLToPath(import.meta.url);

type Backend = "lancedb" | "pgvector";

interface Latency {
  queries: number;
  p50: number;
  p95: number;
  p99: number;
}

interface RunResult {
  backend: Backend;
  requestedRows: number;
  rows: number;
  capped: boolean;
  upsertRowsPerS: number;
  before: Latency;
  optimizeS: number;
  after: Latency;
  recallBefore: number;
  recallAfter: number;
  rssMb: number;
  peakRssMb: number;
}

function unitVector(rand: () => number): Float32Array {
  const v = new Float32Array(dims);
  let norm = 0;
  for (let i = 0; i < dims; i++) {
    v[i] = rand() - 0.5;
    norm += v[i]! * v[i]!;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < dims; i++) v[i]! /= norm;
  return v;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

async function timeSearches(index: VectorIndex, queries: Float32Array[]): Promise<Latency> {
  await index.search(queries[0]!, filter, k); // warm-up
  const times: number[] = [];
  const started = performance.now();
  for (const q of queries) {
    const t = performance.now();
    await index.search(q, filter, k);
    times.push(performance.now() - t);
    if (performance.now() - started > phaseBudgetMs) break;
  }
  times.sort((a, b) => a - b);
  return { queries: times.length, p50: percentile(times, 0.5), p95: percentile(times, 0.95), p99: percentile(times, 0.99) };
}

/** The fraction of the exact top k that the index returns, over a few queries. */
async function recallAt(index: VectorIndex, vectors: Float32Array[], queries: Float32Array[]): Promise<number> {
  let found = 0;
  for (const q of queries) {
    const scores = vectors.map((v, i) => {
      let dot = 0;
      for (let d = 0; d < dims; d++) dot += v[d]! * q[d]!;
      return [dot, i] as const;
    });
    const exact = new Set(scores.sort((a, b) => b[0] - a[0]).slice(0, k).map(([, i]) => `mem_${i}`));
    found += (await index.search(q, filter, k)).filter((h) => exact.has(h.id)).length;
  }
  return found / (queries.length * k);
}

/** One backend at one size, in this (child) process. */
async function runOne(backend: Backend, rows: number, loadCapS: number): Promise<RunResult> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), "agentmem-bench-vec-"));
  const db = backend === "pgvector" ? await openPglite("memory://", { vector: true }) : undefined;
  const index = db ? await openPgvectorIndex(db, dims) : await openLanceIndex({ uri: scratch, dimensions: dims });
  try {
    const rand = prng(rows);
    const vectors: Float32Array[] = [];
    const loadStarted = performance.now();
    let capped = false;
    for (let offset = 0; offset < rows; offset += batchSize) {
      if ((performance.now() - loadStarted) / 1000 > loadCapS) {
        capped = true;
        break;
      }
      const batch = Array.from({ length: Math.min(batchSize, rows - offset) }, (_, i): VectorRecord => {
        const vector = unitVector(rand);
        vectors.push(vector);
        const id = offset + i;
        return factRecord({ id: `mem_${id}`, content: `memory ${id}`, workspaceId: filter.workspaceId, containers: filter.containers!, vector, createdAt: Date.now() });
      });
      await index.upsert(batch);
    }
    const loadS = (performance.now() - loadStarted) / 1000;
    const queries = Array.from({ length: maxQueries }, () => unitVector(rand));
    const sample = queries.slice(0, recallQueries);

    const before = await timeSearches(index, queries);
    const recallBefore = await recallAt(index, vectors, sample);
    const optimizeStarted = performance.now();
    await index.optimize();
    const optimizeS = (performance.now() - optimizeStarted) / 1000;
    const after = await timeSearches(index, queries);
    const recallAfter = await recallAt(index, vectors, sample);
    return {
      backend,
      requestedRows: rows,
      rows: await index.count(),
      capped,
      upsertRowsPerS: vectors.length / loadS,
      before,
      optimizeS,
      after,
      recallBefore,
      recallAfter,
      rssMb: process.memoryUsage().rss / 2 ** 20,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
    };
  } finally {
    await index.close();
    await db?.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

function runChild(backend: Backend, rows: number, loadCapS: number): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", self, "--child", backend, String(rows), String(loadCapS)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`${backend} at ${rows} rows exited with ${code}`));
      resolve(JSON.parse(out.trim().split("\n").at(-1)!) as RunResult);
    });
  });
}

function formatTable(results: RunResult[]): string {
  const ms = (v: number) => v.toFixed(1);
  const lat = (l: Latency) => `${ms(l.p50)}/${ms(l.p95)}/${ms(l.p99)} (${l.queries})`;
  const columns: Array<[string, (r: RunResult) => string]> = [
    ["backend", (r) => r.backend],
    ["rows", (r) => `${r.rows}${r.capped ? ` (capped, of ${r.requestedRows})` : ""}`],
    ["upsert rows/s", (r) => r.upsertRowsPerS.toFixed(0)],
    ["search before optimize p50/p95/p99 ms (n)", (r) => lat(r.before)],
    ["recall", (r) => r.recallBefore.toFixed(2)],
    ["optimize s", (r) => r.optimizeS.toFixed(1)],
    ["search after optimize p50/p95/p99 ms (n)", (r) => lat(r.after)],
    ["recall", (r) => r.recallAfter.toFixed(2)],
    ["RSS MB (peak)", (r) => `${r.rssMb.toFixed(0)} (${r.peakRssMb.toFixed(0)})`],
  ];
  const rows = [columns.map(([title]) => title), ...results.map((r) => columns.map(([, cell]) => cell(r)))];
  const widths = columns.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  const line = (row: string[]) => row.map((cell, c) => cell.padEnd(widths[c]!)).join("  ");
  return [line(rows[0]!), line(widths.map((w) => "-".repeat(w))), ...rows.slice(1).map(line)].join("\n");
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      child: { type: "boolean", default: false },
      sizes: { type: "string", default: "10000,100000" },
      "load-cap-s": { type: "string", default: "150" },
    },
    allowPositionals: true,
    strict: false,
  });
  if (values.child) {
    const [backend, rows, cap] = process.argv.slice(-3);
    console.log(JSON.stringify(await runOne(backend as Backend, Number(rows), Number(cap))));
    return;
  }
  const sizes = String(values.sizes).split(",").map(Number);
  const loadCapS = Number(values["load-cap-s"]);
  const started = Date.now();
  const results: RunResult[] = [];
  const skipped: string[] = [];
  for (const backend of ["lancedb", "pgvector"] as const) {
    let rate = Infinity;
    for (const rows of sizes) {
      const projectedS = rows / rate;
      if (projectedS > loadCapS) {
        skipped.push(`${backend} at ${rows} rows: load projected at ${Math.round(projectedS)} s (${Math.round(rate)} rows/s), over the ${loadCapS} s cap`);
        continue;
      }
      process.stderr.write(`${backend} at ${rows} rows...\n`);
      const result = await runChild(backend, rows, loadCapS);
      rate = result.upsertRowsPerS;
      results.push(result);
    }
  }
  const run = {
    node: process.version,
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    dims,
    k,
    filter: "workspace + one container (matches every row)",
    totalS: Math.round((Date.now() - started) / 1000),
    startedAt: new Date(started).toISOString(),
  };
  console.log(formatTable(results));
  for (const line of skipped) console.log(`skipped: ${line}`);
  console.log(`\ntotal ${run.totalS} s; recall is recall@${k} against an exact scan over ${recallQueries} queries`);
  const file = path.join(path.dirname(self), "results", "vector-index.json");
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ run, results, skipped }, null, 2) + "\n");
}

await main();
