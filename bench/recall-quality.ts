// Retrieval quality of recall on LoCoMo (evaluation only: the data set is CC BY-NC 4.0 and is read from
// outside the repository, never copied into it).
//
//   npx tsx bench/recall-quality.ts [--data /work/shared/data/locomo/locomo10.json] [--variants speaker,text]
//                                   [--concurrency 6] [--no-any50] [--reuse-dir DIR] [--timeout 2400]
//
// Every turn of a conversation becomes one memory ("<speaker>: <text>", or the text alone, plus
// " [image: <caption>]" when the turn shares a photo) in one container per conversation, type fact,
// validFrom = the session's date, dia_id in metadata. Memories go in through the REST batch endpoint of a
// server started in this process (PGlite + LanceDB, the defaults), which is then drained of indexing work.
// Every question of categories 1-4 (n = 1,536) is then recalled over REST in its conversation's container,
// per search mode, with limit 10 (and limit 50 for any@50). Metrics: any@k (an evidence turn in the top
// k), frac@k (share of the evidence turns in the top k), MRR@10 (reciprocal rank of the first evidence
// turn within the top 10, 0 when none is there). Conversations 0-4 are the tuning split, 5-9 held out.
// Writes bench/results/recall-quality.json. --reuse-dir keeps the ingested data between runs (scoring
// changes need no re-ingest).

import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startApp, type App } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { closedLoop } from "./lib/closed-loop.js";
import { postOrFail as post } from "./lib/http-json.js";
import {
  loadLocomo,
  metricsOf,
  turnContent,
  type ContentVariant,
  type Conversation,
  type Judged,
  type Metrics,
} from "./lib/locomo.js";
import { Recorder } from "./lib/stats.js";
import { settleIndex } from "./lib/settle-index.js";
import { alignedTable } from "./lib/table.js";
import { runBench, stopAfter } from "./lib/run.js";

const modes = ["semantic", "keyword", "hybrid"] as const;
type Mode = (typeof modes)[number];
const categories = [1, 2, 3, 4] as const;
const categoryNames: Record<number, string> = { 1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop" };
const tuneConversations = new Set([0, 1, 2, 3, 4]);
const batchSize = 100;
const ingestConcurrency = 4;

interface Options {
  data: string;
  variants: ContentVariant[];
  concurrency: number;
  any50: boolean;
  reuseDir: string | undefined;
  timeoutS: number;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: "string", default: "/work/shared/data/locomo/locomo10.json" },
      variants: { type: "string", default: "speaker,text" },
      concurrency: { type: "string", default: "6" },
      "no-any50": { type: "boolean", default: false },
      "reuse-dir": { type: "string" },
      timeout: { type: "string", default: "2400" },
    },
  });
  const variants = values.variants.split(",").map((v) => v.trim());
  for (const v of variants) if (v !== "speaker" && v !== "text") throw new Error(`--variants: "${v}" is not speaker or text`);
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error("--concurrency must be a positive integer");
  return {
    data: values.data,
    variants: variants as ContentVariant[],
    concurrency,
    any50: !values["no-any50"],
    reuseDir: values["reuse-dir"],
    timeoutS: Number(values.timeout),
  };
}

/** A server in this process, an agent key for the whole workspace, and where each memory came from. */
interface Corpus {
  app: App;
  key: string;
  /** Memory id -> dia_id. */
  diaIdOf: Map<string, string>;
  ingest: { memories: number; apiS: number; indexedS: number } | null;
  close(): Promise<void>;
}

const adminKey = `bench-admin-${randomBytes(16).toString("hex")}`;

/** Starts the server on a data directory (fresh, or kept from an earlier run) and ingests LoCoMo into it unless already there. */
async function openCorpus(conversations: Conversation[], variant: ContentVariant, reuseDir: string | undefined): Promise<Corpus> {
  const dataDir = reuseDir ? path.resolve(reuseDir, variant) : await mkdtemp(path.join(tmpdir(), "agentmem-locomo-"));
  await mkdir(dataDir, { recursive: true });
  const manifest = path.join(dataDir, "bench-manifest.json");
  const app = await startApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "warn", AGENTMEM_ADMIN_KEY: adminKey }),
  );
  const close = async () => {
    await app.close();
    if (!reuseDir) await rm(dataDir, { recursive: true, force: true });
  };
  try {
    if (reuseDir && existsSync(manifest)) {
      const saved = JSON.parse(await readFile(manifest, "utf8")) as { key: string; diaIdOf: Array<[string, string]> };
      await settleIndex(app);
      console.error(`  reusing ${saved.diaIdOf.length} memories in ${dataDir}`);
      return { app, key: saved.key, diaIdOf: new Map(saved.diaIdOf), ingest: null, close };
    }
    const key = (await post(`${app.url}/api/v1/admin/keys`, adminKey, { workspace: "locomo" })).key as string;
    const batches = conversations.flatMap((c) => {
      const inputs = c.turns.map((t) => ({
        input: {
          content: turnContent(t, variant),
          type: "fact",
          containers: [`conv-${c.index}`],
          ...(t.date ? { validFrom: t.date } : {}),
          metadata: { dia_id: t.diaId, session: t.session, speaker: t.speaker, sample_id: c.sampleId },
        },
        diaId: t.diaId,
      }));
      return Array.from({ length: Math.ceil(inputs.length / batchSize) }, (_, b) => inputs.slice(b * batchSize, (b + 1) * batchSize));
    });
    const diaIdOf = new Map<string, string>();
    const rec = new Recorder();
    const started = performance.now();
    await closedLoop({ concurrency: ingestConcurrency, calls: batches.length }, rec, async (i) => {
      const batch = batches[i]!;
      const res = await post(`${app.url}/api/v1/agent/memories`, key, { memories: batch.map((b) => b.input) });
      (res.ids as string[]).forEach((id, k) => diaIdOf.set(id, batch[k]!.diaId));
    });
    if (rec.errors > 0) throw new Error(`ingest failed: ${JSON.stringify(rec.errorKinds)}`);
    const apiS = (performance.now() - started) / 1000;
    await settleIndex(app);
    const indexedS = (performance.now() - started) / 1000;
    console.error(`  ingested ${diaIdOf.size} memories: API ${apiS.toFixed(1)} s, indexed after ${indexedS.toFixed(1)} s`);
    if (reuseDir) await writeFile(manifest, JSON.stringify({ key, diaIdOf: [...diaIdOf] }));
    return { app, key, diaIdOf, ingest: { memories: diaIdOf.size, apiS, indexedS }, close };
  } catch (err) {
    await close();
    throw err;
  }
}

interface Asked {
  conversation: number;
  category: number;
  question: string;
  evidence: string[];
}

/** Recalls every question in every mode, limit 10 (and 50); returns the judged questions per mode. */
async function askAll(corpus: Corpus, asked: Asked[], options: Options) {
  const judged: Record<Mode, Judged[]> = { semantic: [], keyword: [], hybrid: [] };
  const latency: Record<string, ReturnType<Recorder["result"]>> = {};
  for (const mode of modes) {
    const rec = new Recorder();
    const rows: Judged[] = asked.map((a) => ({ category: a.category, evidence: a.evidence, top: [] }));
    const limits = options.any50 ? [10, 50] : [10];
    const calls = asked.flatMap((_, q) => limits.map((limit) => ({ q, limit })));
    const elapsedS = await closedLoop({ concurrency: options.concurrency, calls: calls.length }, rec, async (i) => {
      const { q, limit } = calls[i]!;
      const a = asked[q]!;
      const body = await post(`${corpus.app.url}/api/v1/agent/recall`, corpus.key, {
        query: a.question,
        containers: [`conv-${a.conversation}`],
        limit,
        searchMode: mode,
        includeReceipt: false,
      });
      const top = (body.memories as Array<{ id: string }>).map((m) => corpus.diaIdOf.get(m.id) ?? m.id);
      if (limit === 10) rows[q]!.top = top;
      else rows[q]!.top50 = top;
    });
    if (rec.errors > 0) throw new Error(`recall (${mode}) failed: ${JSON.stringify(rec.errorKinds)}`);
    latency[mode] = rec.result({ phase: `recall ${mode}`, transport: "rest", dataSize: corpus.diaIdOf.size, concurrency: options.concurrency }, elapsedS);
    console.error(`  ${mode}: ${calls.length} recalls in ${elapsedS.toFixed(1)} s (p50 ${latency[mode]!.p50Ms.toFixed(1)} ms)`);
    judged[mode] = rows;
  }
  return { judged, latency };
}

type Split = "tune (conv 0-4)" | "held-out (conv 5-9)" | "all";
const splits: Split[] = ["tune (conv 0-4)", "held-out (conv 5-9)", "all"];
const inSplit = (split: Split, conversation: number) =>
  split === "all" || (split === "tune (conv 0-4)") === tuneConversations.has(conversation);

interface VariantResult {
  variant: ContentVariant;
  ingest: Corpus["ingest"];
  /** mode -> split -> "overall" | category -> metrics. */
  metrics: Record<Mode, Record<Split, Record<string, Metrics>>>;
  recallLatency: Record<string, unknown>;
}

function summarise(asked: Asked[], judged: Record<Mode, Judged[]>): VariantResult["metrics"] {
  const out = {} as VariantResult["metrics"];
  for (const mode of modes) {
    out[mode] = {} as Record<Split, Record<string, Metrics>>;
    for (const split of splits) {
      const rows = judged[mode].filter((_, i) => inSplit(split, asked[i]!.conversation));
      const byCategory: Record<string, Metrics> = { overall: metricsOf(rows) };
      for (const c of categories) byCategory[`${c} ${categoryNames[c]}`] = metricsOf(rows.filter((r) => r.category === c));
      out[mode][split] = byCategory;
    }
  }
  return out;
}

const f3 = (v: number | null) => (v === null ? "-" : v.toFixed(3).replace(/^0\./, "."));
const metricColumns = ["n", "any@1", "any@5", "any@10", "any@50", "frac@5", "frac@10", "MRR@10"];
const metricCells = (m: Metrics) => [String(m.n), f3(m.any1), f3(m.any5), f3(m.any10), f3(m.any50), f3(m.frac5), f3(m.frac10), f3(m.mrr10)];

function report(results: VariantResult[]): string {
  const out: string[] = [];
  const bm25 = ["BM25 reference", "all", "overall", "1536", ".315", ".557", ".624", ".766", ".504", ".566", "-"];
  const overall = [["variant", "split", "mode", ...metricColumns]];
  for (const r of results) {
    for (const split of splits) for (const mode of modes) overall.push([r.variant, split, mode, ...metricCells(r.metrics[mode][split].overall!)]);
  }
  out.push("Overall, categories 1-4:", alignedTable([...overall, bm25], [0, 1, 2]), "");
  for (const r of results) {
    const rows = [["mode", "category", ...metricColumns]];
    for (const mode of modes) {
      for (const [cat, m] of Object.entries(r.metrics[mode].all)) rows.push([mode, cat, ...metricCells(m)]);
    }
    out.push(`Per category, all conversations, content variant "${r.variant}":`, alignedTable(rows, [0, 1]), "");
  }
  return out.join("\n");
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  stopAfter(options.timeoutS);
  const startedAt = new Date().toISOString();
  const loadBefore = loadavg()[0]!;
  const conversations = await loadLocomo(options.data);
  const asked: Asked[] = conversations.flatMap((c) =>
    c.questions
      .filter((q) => q.category >= 1 && q.category <= 4 && q.evidence.length > 0)
      .map((q) => ({ conversation: c.index, category: q.category, question: q.question, evidence: q.evidence })),
  );
  console.error(`${conversations.length} conversations, ${conversations.reduce((s, c) => s + c.turns.length, 0)} turns, ${asked.length} questions (categories 1-4 with evidence)`);

  const results: VariantResult[] = [];
  for (const variant of options.variants) {
    console.error(`content variant "${variant}":`);
    const corpus = await openCorpus(conversations, variant, options.reuseDir);
    try {
      const { judged, latency } = await askAll(corpus, asked, options);
      results.push({ variant, ingest: corpus.ingest, metrics: summarise(asked, judged), recallLatency: latency });
    } finally {
      await corpus.close();
    }
  }

  console.log(report(results));
  const file = fileURLToPath(new URL("results/recall-quality.json", import.meta.url));
  await mkdir(path.dirname(file), { recursive: true });
  const run = {
    data: path.basename(options.data),
    questions: asked.length,
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? "unknown",
    node: process.version,
    loadAvg1m: loadBefore,
    concurrency: options.concurrency,
    startedAt,
    notes: [
      "categories 1-4, questions whose evidence names at least one existing turn",
      "MRR@10: reciprocal rank of the first evidence turn within the top 10, 0 when none is there",
      "any@50 from a separate recall with limit 50; the @1-@10 metrics from recalls with limit 10",
      "tune split: conversations 0-4; held-out split: conversations 5-9",
    ],
    bm25Reference: { n: 1536, any1: 0.315, any5: 0.557, any10: 0.624, any50: 0.766, frac5: 0.504, frac10: 0.566 },
  };
  await writeFile(file, JSON.stringify({ run, results }, null, 2) + "\n");
  console.log(`\nwritten to ${file}`);
}

runBench(async () => {
  await main();
  return 0;
});
