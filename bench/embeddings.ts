// Throughput of the built-in use-lite embedder on both runtimes side by side: the ONNX conversion on
// onnxruntime-node (the default) and the TF.js WebAssembly original. Sentences/s one at a time and in
// batches, per-call latency, CPU time per sentence (the server process and its model processes),
// main-thread event-loop delay while embedding, and RSS; plus the tokenizer's share.
//
//   npx tsx bench/embeddings.ts [--seconds 4] [--runtime onnx|tfjs|both]
//
// Texts are the ingest benchmark's memory sentences (bench/lib/content.ts). Writes
// bench/results/embeddings.json. With --runtime both it runs in about two minutes.

import { mkdir, readFile, writeFile } from "node:fs/promises";
import { availableParallelism, cpus, loadavg } from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Tokenizer } from "@tensorflow-models/universal-sentence-encoder/dist/tokenizer/index.js";
import { UseLiteEmbedder, type UseLiteOptions } from "../src/embeddings/use-lite-embedder.js";
import { useLiteModelDir } from "../src/embeddings/use-lite-onnx/load-model.js";
import { sentence } from "./lib/content.js";
import { treeCpuMs, treeRssMb } from "./lib/process-tree.js";

type Runtime = NonNullable<UseLiteOptions["runtime"]>;
interface Setup {
  runtime: Runtime;
  /** Model processes. */
  workers: number;
  /** Threads per model process. */
  threads: number;
}

const batchSizes = [1, 8, 32, 64];
const setups: Record<Runtime, Array<Omit<Setup, "runtime">>> = {
  onnx: [
    { workers: 1, threads: 1 },
    { workers: 2, threads: 1 },
    { workers: 1, threads: 2 },
  ],
  // TF.js runs single-threaded under Node (its wasm backend has no threads there).
  tfjs: [
    { workers: 1, threads: 1 },
    { workers: 2, threads: 1 },
  ],
};

interface Phase extends Setup {
  batch: number;
  calls: number;
  sentencesPerS: number;
  p50Ms: number;
  p95Ms: number;
  /** CPU time of this process and the model processes per sentence: comparable even on a busy machine. */
  cpuMsPerSentence: number;
  /** The model processes' part of it. */
  modelCpuMsPerSentence: number;
  /** Worst main-thread event-loop delay while embedding: what a concurrent request would wait. */
  loopDelayMaxMs: number;
  /** RSS of this process (the caller: the server, here the bench) and of the model processes together. */
  rssMb: number;
  modelRssMb: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

async function phase(embedder: UseLiteEmbedder, setup: Setup, batch: number, seconds: number): Promise<Phase> {
  let next = 0;
  const texts = () => Array.from({ length: batch }, () => sentence(next++));
  await embedder.embed(texts());
  const latencies: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const started = performance.now();
  const cpuBefore = treeCpuMs();
  while (performance.now() - started < seconds * 1000) {
    const input = texts();
    const t0 = performance.now();
    await embedder.embed(input);
    latencies.push(performance.now() - t0);
  }
  const elapsed = performance.now() - started;
  const cpuAfter = treeCpuMs();
  const sentences = latencies.length * batch;
  loop.disable();
  latencies.sort((a, b) => a - b);
  const rss = treeRssMb();
  return {
    ...setup,
    batch,
    calls: latencies.length,
    sentencesPerS: (sentences * 1000) / elapsed,
    p50Ms: percentile(latencies, 0.5),
    p95Ms: percentile(latencies, 0.95),
    cpuMsPerSentence: (cpuAfter.own + cpuAfter.children - cpuBefore.own - cpuBefore.children) / sentences,
    modelCpuMsPerSentence: (cpuAfter.children - cpuBefore.children) / sentences,
    loopDelayMaxMs: loop.max / 1e6,
    rssMb: rss.own,
    modelRssMb: rss.children,
  };
}

function table(phases: Phase[]): string {
  const columns: Array<[string, (p: Phase) => string]> = [
    ["runtime", (p) => p.runtime],
    ["procs", (p) => String(p.workers)],
    ["threads", (p) => String(p.threads)],
    ["batch", (p) => String(p.batch)],
    ["calls", (p) => String(p.calls)],
    ["sentences/s", (p) => p.sentencesPerS.toFixed(1)],
    ["p50 ms", (p) => p.p50Ms.toFixed(1)],
    ["p95 ms", (p) => p.p95Ms.toFixed(1)],
    ["cpu ms/sentence", (p) => p.cpuMsPerSentence.toFixed(2)],
    ["in model procs", (p) => p.modelCpuMsPerSentence.toFixed(2)],
    ["loop delay max ms", (p) => p.loopDelayMaxMs.toFixed(1)],
    ["rss MB", (p) => String(p.rssMb)],
    ["model procs rss MB", (p) => String(p.modelRssMb)],
  ];
  const rows = [columns.map(([title]) => title), ...phases.map((p) => columns.map(([, cell]) => cell(p)))];
  const widths = columns.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  return rows.map((row) => row.map((cell, c) => cell.padStart(widths[c]!)).join("  ")).join("\n");
}

/** The tokenizer's cost on the same sentences, in this process: part of every sentence's CPU time. */
async function tokenizerCost(): Promise<{ tokensPerSentence: number; msPerSentence: number }> {
  const tokenizer = new Tokenizer(JSON.parse(await readFile(path.join(useLiteModelDir, "vocab.json"), "utf8")));
  const count = 2000;
  for (let i = 0; i < 200; i++) tokenizer.encode(sentence(i));
  let tokens = 0;
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < count; i++) tokens += tokenizer.encode(sentence(i)).length;
  const cpu = process.cpuUsage(cpuBefore);
  return { tokensPerSentence: tokens / count, msPerSentence: (cpu.user + cpu.system) / 1000 / count };
}

async function main() {
  const { values } = parseArgs({
    options: { seconds: { type: "string", default: "4" }, runtime: { type: "string", default: "both" } },
  });
  const seconds = Number(values.seconds);
  if (!["onnx", "tfjs", "both"].includes(values.runtime)) throw new Error("--runtime must be onnx, tfjs or both");
  const runtimes: Runtime[] = values.runtime === "both" ? ["onnx", "tfjs"] : [values.runtime as Runtime];
  const run = {
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? "unknown",
    node: process.version,
    secondsPerPhase: seconds,
    loadAverageBefore: loadavg()[0]!,
    startedAt: new Date().toISOString(),
  };
  const tokenizer = await tokenizerCost();
  const loads: Array<Setup & { loadMs: number }> = [];
  const phases: Phase[] = [];
  for (const runtime of runtimes) {
    for (const { workers, threads } of setups[runtime]) {
      const t0 = performance.now();
      const embedder = await UseLiteEmbedder.create({ batchSize: Math.max(...batchSizes), workers, threads, runtime });
      loads.push({ runtime, workers, threads, loadMs: Math.round(performance.now() - t0) });
      try {
        for (const batch of batchSizes) phases.push(await phase(embedder, { runtime, workers, threads }, batch, seconds));
      } finally {
        await embedder.close();
      }
    }
  }
  const loadAverageAfter = loadavg()[0]!;

  console.log(`use-lite embeddings   cores: ${run.cores}   cpu: ${run.cpu}   node: ${run.node}`);
  console.log(`load: ${loads.map((l) => `${l.runtime} ${l.workers}x${l.threads} ${l.loadMs} ms`).join(", ")}`);
  console.log(`1-min load average: ${run.loadAverageBefore.toFixed(2)} before, ${loadAverageAfter.toFixed(2)} after`);
  console.log(
    `tokenizer: ${tokenizer.tokensPerSentence.toFixed(1)} tokens/sentence, ${tokenizer.msPerSentence.toFixed(3)} ms CPU/sentence (included below)`,
  );
  console.log("");
  console.log(table(phases));
  console.log("\nNotes: a batch is one embed() call; with 2 processes a call is split between them.");
  console.log("Other processes on this machine lower sentences/s; cpu ms/sentence is what each costs.");

  const file = fileURLToPath(new URL("./results/embeddings.json", import.meta.url));
  await mkdir(fileURLToPath(new URL("./results/", import.meta.url)), { recursive: true });
  await writeFile(file, JSON.stringify({ run: { ...run, loadAverageAfter, loads, tokenizer }, phases }, null, 2) + "\n");
  console.log(`\nwritten to ${file}`);
}

await main();
