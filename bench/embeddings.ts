// Throughput of the built-in use-lite embedder: sentences/s one at a time and in batches, with one and
// two model workers, plus per-call latency, main-thread event-loop delay while embedding, and RSS.
//
//   npx tsx bench/embeddings.ts [--seconds 5]
//
// Texts are the ingest benchmark's memory sentences (bench/lib/content.ts). Writes
// bench/results/embeddings.json. Runs in well under two minutes.

import { mkdir, writeFile } from "node:fs/promises";
import { availableParallelism, cpus, loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { UseLiteEmbedder } from "../src/embeddings/use-lite-embedder.js";
import { sentence } from "./lib/content.js";

const batchSizes = [1, 8, 32, 64];
const workerCounts = [1, 2];

interface Phase {
  workers: number;
  batch: number;
  calls: number;
  sentencesPerS: number;
  p50Ms: number;
  p95Ms: number;
  /** CPU time of the whole process (all threads) per sentence: comparable even on a busy machine. */
  cpuMsPerSentence: number;
  /** Worst main-thread event-loop delay while embedding: what a concurrent request would wait. */
  loopDelayMaxMs: number;
  rssMb: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
const mb = (bytes: number) => Math.round(bytes / 1e6);

async function phase(embedder: UseLiteEmbedder, workers: number, batch: number, seconds: number): Promise<Phase> {
  let next = 0;
  const texts = () => Array.from({ length: batch }, () => sentence(next++));
  await embedder.embed(texts());
  const latencies: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  while (performance.now() - started < seconds * 1000) {
    const input = texts();
    const t0 = performance.now();
    await embedder.embed(input);
    latencies.push(performance.now() - t0);
  }
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  loop.disable();
  latencies.sort((a, b) => a - b);
  return {
    workers,
    batch,
    calls: latencies.length,
    sentencesPerS: (latencies.length * batch * 1000) / elapsed,
    p50Ms: percentile(latencies, 0.5),
    p95Ms: percentile(latencies, 0.95),
    cpuMsPerSentence: (cpu.user + cpu.system) / 1000 / (latencies.length * batch),
    loopDelayMaxMs: loop.max / 1e6,
    rssMb: mb(process.memoryUsage().rss),
  };
}

function table(phases: Phase[]): string {
  const columns: Array<[string, (p: Phase) => string]> = [
    ["workers", (p) => String(p.workers)],
    ["batch", (p) => String(p.batch)],
    ["calls", (p) => String(p.calls)],
    ["sentences/s", (p) => p.sentencesPerS.toFixed(1)],
    ["p50 ms", (p) => p.p50Ms.toFixed(1)],
    ["p95 ms", (p) => p.p95Ms.toFixed(1)],
    ["cpu ms/sentence", (p) => p.cpuMsPerSentence.toFixed(1)],
    ["loop delay max ms", (p) => p.loopDelayMaxMs.toFixed(1)],
    ["rss MB", (p) => String(p.rssMb)],
  ];
  const rows = [columns.map(([title]) => title), ...phases.map((p) => columns.map(([, cell]) => cell(p)))];
  const widths = columns.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  return rows.map((row) => row.map((cell, c) => cell.padStart(widths[c]!)).join("  ")).join("\n");
}

async function main() {
  const { values } = parseArgs({ options: { seconds: { type: "string", default: "5" } } });
  const seconds = Number(values.seconds);
  const run = {
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? "unknown",
    node: process.version,
    secondsPerPhase: seconds,
    loadAverageBefore: loadavg()[0]!,
    startedAt: new Date().toISOString(),
  };
  const loads: Array<{ workers: number; loadMs: number }> = [];
  const phases: Phase[] = [];
  for (const workers of workerCounts) {
    const t0 = performance.now();
    const embedder = await UseLiteEmbedder.create({ batchSize: Math.max(...batchSizes), workers });
    loads.push({ workers, loadMs: Math.round(performance.now() - t0) });
    try {
      for (const batch of batchSizes) phases.push(await phase(embedder, workers, batch, seconds));
    } finally {
      await embedder.close();
    }
  }
  const loadAverageAfter = loadavg()[0]!;

  console.log(`use-lite embeddings   cores: ${run.cores}   cpu: ${run.cpu}   node: ${run.node}`);
  console.log(`load: ${loads.map((l) => `${l.workers} worker(s) ${l.loadMs} ms`).join(", ")}`);
  console.log(`1-min load average: ${run.loadAverageBefore.toFixed(2)} before, ${loadAverageAfter.toFixed(2)} after`);
  console.log("");
  console.log(table(phases));
  console.log("\nNotes: a batch is one embed() call; with 2 workers a call is split between them.");
  console.log("Other processes on this machine lower sentences/s; cpu ms/sentence is what each costs.");

  const file = fileURLToPath(new URL("./results/embeddings.json", import.meta.url));
  await mkdir(fileURLToPath(new URL("./results/", import.meta.url)), { recursive: true });
  await writeFile(file, JSON.stringify({ run: { ...run, loadAverageAfter, loads }, phases }, null, 2) + "\n");
  console.log(`\nwritten to ${file}`);
}

await main();
