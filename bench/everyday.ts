// Recall quality on the everyday agent-memory sets: one user's facts, preferences, contacts and lessons,
// some of which changed over time, and questions as an agent asks them mid-task.
//
//   npx tsx bench/everyday.ts [--data FILE[,FILE...]] [--modes hybrid[,semantic,keyword]]
//                             [--no-valid-until | --valid-until] [--show-misses] [--timeout 900]
//
// --data defaults to ../shared/data/agent-memory/everyday.json (beside the repository, never copied into
// it; its README.md describes the format); a list runs each file and reports each, e.g.
// --data ../shared/data/agent-memory/everyday.json,bench/data/everyday-heldout.json. For every file a
// server starts in this process (PGlite in memory + LanceDB, the defaults), so that one file's keyword
// statistics never depend on another's, and the file's memories go into a container of their own, ONE AT
// A TIME through REST (POST /api/v1/agent/memories) in validFrom order (ties in file order), each with its
// type and validFrom, as an agent learns them: contradiction detection runs on every write, and the
// contradictions the create responses report (older memories shadowed) are counted. The index is then
// drained and folded (bench/lib/settle-index.ts), and every question is recalled over REST
// (POST /api/v1/agent/recall) in that container, per search mode (default hybrid), limit 10.
//
// validUntil: by default (--no-valid-until) the data's validUntil is dropped, so the service has to work
// out which value of a changed fact is current by itself (agents rarely know when a fact will stop being
// true); --valid-until stores it, and then an ended memory must never be recalled (recall drops expired
// memories unless includeExpired). Either way the run counts how often a memory the data marks as ended
// came back first or in the top 5 ("ended@1", "ended@5").
//
// Metrics, per category (update, identifier, lexical, paraphrase) and overall: R@1 (the first memory is
// in the question's expect), R@5 and R@10 (an expected memory in the top 5 / 10), MRR@10 (reciprocal
// rank of the first expected memory in the top 10, 0 when none is there). --show-misses lists the
// questions whose first memory is wrong, with what ranked first, and the memories shadowed on ingest.
// Writes bench/results/everyday.json.

import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { availableParallelism, cpus, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startApp, type App } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { postOrFail as post } from "./lib/http-json.js";
import { settleIndex } from "./lib/settle-index.js";
import { alignedTable } from "./lib/table.js";
import { runBench, stopAfter } from "./lib/run.js";

const allModes = ["hybrid", "semantic", "keyword"] as const;
type Mode = (typeof allModes)[number];
const categories = ["update", "identifier", "lexical", "paraphrase"] as const;
const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const defaultData = path.resolve(repoRoot, "../shared/data/agent-memory/everyday.json");
const limit = 10;

interface DataMemory {
  id: string;
  type: string;
  content: string;
  validFrom: string;
  validUntil?: string;
}
interface DataQuestion {
  category: string;
  query: string;
  expect: string[];
}
interface DataSet {
  memories: DataMemory[];
  questions: DataQuestion[];
}

interface Options {
  data: string[];
  modes: Mode[];
  keepValidUntil: boolean;
  showMisses: boolean;
  timeoutS: number;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: "string", default: defaultData },
      modes: { type: "string", default: "hybrid" },
      "no-valid-until": { type: "boolean", default: false },
      "valid-until": { type: "boolean", default: false },
      "show-misses": { type: "boolean", default: false },
      timeout: { type: "string", default: "900" },
    },
  });
  if (values["no-valid-until"] && values["valid-until"]) throw new Error("--valid-until and --no-valid-until exclude each other");
  const modes = values.modes.split(",").map((m) => m.trim());
  for (const m of modes) if (!(allModes as readonly string[]).includes(m)) throw new Error(`--modes: "${m}" is not one of ${allModes.join(", ")}`);
  return {
    data: values.data.split(",").map((f) => path.resolve(f.trim())),
    modes: modes as Mode[],
    keepValidUntil: values["valid-until"],
    showMisses: values["show-misses"],
    timeoutS: Number(values.timeout),
  };
}

async function loadDataSet(file: string): Promise<DataSet> {
  const d = JSON.parse(await readFile(file, "utf8")) as Partial<DataSet>;
  if (!Array.isArray(d.memories) || !Array.isArray(d.questions)) throw new Error(`${file}: expected "memories" and "questions" arrays`);
  const ids = new Set(d.memories.map((m) => m.id));
  if (ids.size !== d.memories.length) throw new Error(`${file}: memory ids are not unique`);
  for (const q of d.questions) {
    for (const e of q.expect) if (!ids.has(e)) throw new Error(`${file}: question "${q.query}" expects unknown memory "${e}"`);
  }
  return d as DataSet;
}

interface Ingested {
  key: string;
  container: string;
  /** Service id -> data id, and back. */
  labelOf: Map<string, string>;
  idOf: Map<string, string>;
  /** "older → newer" (the reason the service gave) for every memory a create shadowed. */
  shadowed: Array<{ older: string; newer: string; reason: string }>;
  /** Memories stored as a duplicate of an earlier one. */
  duplicates: string[];
  seconds: number;
}

const adminKey = `bench-admin-${randomBytes(16).toString("hex")}`;

/** Stores the memories one at a time in validFrom order (a stable sort keeps the file's order among ties). */
async function ingest(app: App, data: DataSet, container: string, keepValidUntil: boolean): Promise<Ingested> {
  const key = (await post(`${app.url}/api/v1/admin/keys`, adminKey, { workspace: "everyday" })).key as string;
  const ordered = [...data.memories].sort((a, b) => Date.parse(a.validFrom) - Date.parse(b.validFrom));
  const labelOf = new Map<string, string>();
  const idOf = new Map<string, string>();
  const shadowed: Ingested["shadowed"] = [];
  const duplicates: string[] = [];
  const started = performance.now();
  for (const m of ordered) {
    const res = await post(`${app.url}/api/v1/agent/memories`, key, {
      content: m.content,
      type: m.type,
      containers: [container],
      validFrom: m.validFrom,
      ...(keepValidUntil && m.validUntil ? { validUntil: m.validUntil } : {}),
    });
    const id = res.ids[0] as string;
    if (res.results?.[0]?.duplicateOf) duplicates.push(`${m.id} = ${labelOf.get(id) ?? id}`);
    else labelOf.set(id, m.id);
    idOf.set(m.id, id);
    for (const c of (res.contradictions ?? []) as Array<{ conflictsWith: string; shadowed: boolean; reason: string }>) {
      if (c.shadowed) shadowed.push({ older: labelOf.get(c.conflictsWith) ?? c.conflictsWith, newer: m.id, reason: c.reason });
    }
  }
  const seconds = (performance.now() - started) / 1000;
  await settleIndex(app);
  return { key, container, labelOf, idOf, shadowed, duplicates, seconds };
}

interface Row {
  category: string;
  query: string;
  expect: string[];
  /** Data ids of the memories returned, best first. */
  top: string[];
}

interface Metrics {
  n: number;
  r1: number;
  r5: number;
  r10: number;
  mrr10: number;
  /** Questions whose first / top-5 memories include one the data marks as ended (validUntil). */
  ended1: number;
  ended5: number;
}

function metricsOf(rows: readonly Row[], ended: ReadonlySet<string>): Metrics {
  const n = rows.length;
  const share = (f: (r: Row) => boolean) => (n === 0 ? 0 : rows.filter(f).length / n);
  const rank = (r: Row) => r.top.slice(0, limit).findIndex((id) => r.expect.includes(id));
  return {
    n,
    r1: share((r) => rank(r) === 0),
    r5: share((r) => rank(r) >= 0 && rank(r) < 5),
    r10: share((r) => rank(r) >= 0),
    mrr10: n === 0 ? 0 : rows.reduce((s, r) => s + (rank(r) < 0 ? 0 : 1 / (rank(r) + 1)), 0) / n,
    ended1: rows.filter((r) => r.top[0] !== undefined && ended.has(r.top[0])).length,
    ended5: rows.filter((r) => r.top.slice(0, 5).some((id) => ended.has(id))).length,
  };
}

interface DataSetResult {
  data: string;
  memories: number;
  questions: number;
  ingestS: number;
  shadowed: Ingested["shadowed"];
  duplicates: string[];
  /** mode -> "overall" | category -> metrics. */
  metrics: Record<string, Record<string, Metrics>>;
  rows: Record<string, Row[]>;
}

async function runDataSet(file: string, options: Options): Promise<DataSetResult> {
  const data = await loadDataSet(file);
  const name = path.basename(file, ".json");
  console.error(`${name}: ${data.memories.length} memories, ${data.questions.length} questions`);
  const app = await startApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: "memory://", LOG_LEVEL: "warn", AGENTMEM_ADMIN_KEY: adminKey }),
  );
  try {
    const container = `everyday-${name.replace(/[^A-Za-z0-9._:-]/g, "-")}`.slice(0, 64);
    const ing = await ingest(app, data, container, options.keepValidUntil);
    console.error(`  stored one at a time in ${ing.seconds.toFixed(1)} s; ${ing.shadowed.length} shadowed by a contradiction, ${ing.duplicates.length} duplicates`);
    const ended = new Set(data.memories.filter((m) => m.validUntil !== undefined && Date.parse(m.validUntil) <= Date.now()).map((m) => m.id));
    const metrics: DataSetResult["metrics"] = {};
    const rows: DataSetResult["rows"] = {};
    for (const mode of options.modes) {
      const modeRows: Row[] = [];
      for (const q of data.questions) {
        const body = await post(`${app.url}/api/v1/agent/recall`, ing.key, {
          query: q.query,
          containers: [container],
          limit,
          searchMode: mode,
          includeReceipt: false,
        });
        const top = (body.memories as Array<{ id: string }>).map((m) => ing.labelOf.get(m.id) ?? m.id);
        modeRows.push({ category: q.category, query: q.query, expect: q.expect, top });
      }
      rows[mode] = modeRows;
      metrics[mode] = { overall: metricsOf(modeRows, ended) };
      for (const c of categories) metrics[mode]![c] = metricsOf(modeRows.filter((r) => r.category === c), ended);
      for (const c of new Set(modeRows.map((r) => r.category))) {
        if (!(categories as readonly string[]).includes(c)) metrics[mode]![c] = metricsOf(modeRows.filter((r) => r.category === c), ended);
      }
    }
    return {
      data: path.relative(repoRoot, file),
      memories: data.memories.length,
      questions: data.questions.length,
      ingestS: ing.seconds,
      shadowed: ing.shadowed,
      duplicates: ing.duplicates,
      metrics,
      rows,
    };
  } finally {
    await app.close();
  }
}

const f3 = (v: number) => v.toFixed(3).replace(/^0\./, ".");

function report(results: DataSetResult[], options: Options): string {
  const out: string[] = [];
  const table = [["data", "mode", "category", "n", "R@1", "R@5", "R@10", "MRR@10", "ended@1", "ended@5"]];
  for (const r of results) {
    for (const [mode, byCategory] of Object.entries(r.metrics)) {
      for (const [category, m] of Object.entries(byCategory)) {
        if (m.n === 0) continue;
        table.push([path.basename(r.data), mode, category, String(m.n), f3(m.r1), f3(m.r5), f3(m.r10), f3(m.mrr10), String(m.ended1), String(m.ended5)]);
      }
    }
  }
  out.push(
    `validUntil ${options.keepValidUntil ? "stored (--valid-until)" : "dropped (--no-valid-until, the default): the service works out what is current"}; limit ${limit}`,
    alignedTable(table, [0, 1, 2]),
    "",
  );
  for (const r of results) {
    out.push(`${path.basename(r.data)}: ${r.shadowed.length} older memories shadowed by a contradiction on ingest, ${r.duplicates.length} stored as duplicates`);
    if (options.showMisses) {
      for (const s of r.shadowed) out.push(`  shadowed ${s.older} → ${s.newer} (${s.reason})`);
      for (const d of r.duplicates) out.push(`  duplicate ${d}`);
      for (const [mode, rows] of Object.entries(r.rows)) {
        const misses = rows.filter((row) => !row.expect.includes(row.top[0] ?? ""));
        out.push(`  ${mode}: ${misses.length} questions whose first memory is not expected:`);
        for (const row of misses) {
          const at = row.top.findIndex((id) => row.expect.includes(id));
          out.push(`    [${row.category}] ${row.query} → ${row.top[0] ?? "(nothing)"}; want ${row.expect.join("|")} (rank ${at < 0 ? `>${limit}` : at + 1})`);
        }
      }
    }
  }
  return out.join("\n");
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  stopAfter(options.timeoutS);
  const startedAt = new Date().toISOString();
  const loadBefore = loadavg()[0]!;
  const results: DataSetResult[] = [];
  for (const file of options.data) results.push(await runDataSet(file, options));
  console.log(report(results, options));
  const file = fileURLToPath(new URL("results/everyday.json", import.meta.url));
  await mkdir(path.dirname(file), { recursive: true });
  const run = {
    validUntil: options.keepValidUntil ? "stored" : "dropped",
    modes: options.modes,
    limit,
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? "unknown",
    node: process.version,
    loadAvg1m: loadBefore,
    startedAt,
    notes: [
      "memories stored one at a time through REST in validFrom order, one server and container per data file",
      "R@k: an expected memory among the first k; MRR@10: reciprocal rank of the first expected memory within the top 10, 0 when none is there",
      "ended@k: questions with a memory the data marks as ended (validUntil in the past) among the first k",
    ],
  };
  await writeFile(file, JSON.stringify({ run, results }, null, 2) + "\n");
  console.log(`\nwritten to ${file}`);
}

runBench(async () => {
  await main();
  return 0;
});
