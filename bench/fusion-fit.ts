// Compares hybrid fusion rules offline, on the candidates recall really sees, for both recall benchmarks.
//
//   npx tsx bench/fusion-fit.ts --locomo-dir DIR [--features FILE] [--collect] [--grid]
//
// Collect (once, or with --collect): stores the agent-facts memories in a server in this process, opens
// the LoCoMo corpus that `bench/recall-quality.ts --variants speaker --reuse-dir DIR` left in DIR/speaker,
// and runs the recall engine for every question in hybrid mode with limit 10 (so 40 candidates from each
// search), keeping each candidate's features (cosine, bm25, informativeness, the share of the query's
// terms it holds, multipliers, which search found it). Evaluate: ranks the candidates of every question by each rule and reports hit@1 / hit@5 (and
// any@10 on LoCoMo) on the tuning split and the held-out one. Rules are chosen on the tuning splits only
// (agent-facts dev questions, LoCoMo conversations 0-4). --grid scores every rule of four families
// (linear weights on cosine, bm25/(bm25 + 12) and informativeness; the same evidence discounted by
// informativeness, with and without the keyword evidence scaled by the query's coverage; each side divided
// by its best score in the query; reciprocal rank fusion) on the tuning splits and shows the ten best on
// every split.

import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { startApp, type App } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { runRecall } from "../src/recall/recall-engine.js";
import type { RecallQuery } from "../src/recall/recall-rules.js";
import { coverageScale, relevance } from "../src/recall/scoring.js";
import { keywordRelevance } from "../src/search/scoring.js";
import { jobVectorReader } from "../src/memories/job-vectors.js";
import { pendingReader } from "../src/recall/pending-candidates.js";
import { ingestAgentFacts, loadAgentFacts } from "./lib/agent-facts.js";
import { loadLocomo } from "./lib/locomo.js";
import { settleIndex } from "./lib/settle-index.js";
import { alignedTable } from "./lib/table.js";

interface Cand {
  cosine: number;
  bm25: number;
  semantic: boolean;
  keyword: boolean;
  informativeness: number;
  /** Share of the query's terms the memory holds (queryCoverage). */
  queryCoverage: number;
  label: string;
  multiplier: number;
  valid: boolean;
}
interface Asked {
  set: "agent-facts" | "locomo";
  heldOut: boolean;
  expect: string[];
  cands: Cand[];
}

const adminKey = `bench-admin-${randomBytes(16).toString("hex")}`;

function queryOf(query: string, containers: string[]): RecallQuery {
  return {
    query, containers, types: [], tags: [], severity: null, limit: 10, mode: "hybrid", minConfidence: 0, includeReceipt: true,
    includeExpired: false, includeShadowed: false, createdAfter: null, createdBefore: null, validAt: new Date(), threshold: 0, maxTokens: null, metadata: null,
  };
}

async function candidatesOf(app: App, workspaceId: string, query: string, containers: string[], labelOf: Map<string, string>): Promise<Cand[]> {
  const deps = { db: app.db, vectors: app.vectors, embedQuery: async (t: string) => (await app.model.embed([t]))[0]!, readPending: pendingReader(app.db, jobVectorReader(app.db)) };
  const filter = { workspaceId, ...(containers.length ? { containers } : {}) };
  const result = await runRecall(deps, queryOf(query, containers), { workspaceId, container: null }, filter);
  return result.candidates.map((c) => ({
    label: labelOf.get(c.memory.id) ?? c.memory.id,
    cosine: c.cosine,
    bm25: c.bm25,
    semantic: c.matchedVia !== "keyword",
    keyword: c.matchedVia !== "semantic",
    informativeness: c.informativeness,
    queryCoverage: c.queryCoverage,
    multiplier: c.recencyBoost * c.severityMultiplier * c.confidenceMultiplier,
    valid: c.validityState === "active",
  }));
}

const workspaceIdOf = async (app: App, name: string) =>
  (await app.db.query<{ id: string }>("select id from workspaces where name = $1", [name]))[0]!.id;

async function collect(locomoDir: string): Promise<Asked[]> {
  const asked: Asked[] = [];
  {
    const app = await startApp(loadConfig({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: "memory://", LOG_LEVEL: "warn", AGENTMEM_ADMIN_KEY: adminKey }));
    try {
      const { memories, questions } = await loadAgentFacts();
      const facts = await ingestAgentFacts(app.url, adminKey, memories);
      await settleIndex(app);
      const ws = await workspaceIdOf(app, "agent-facts");
      for (const q of questions) {
        asked.push({ set: "agent-facts", heldOut: q.heldOut, expect: q.expect, cands: await candidatesOf(app, ws, q.query, [], facts.keyOf) });
      }
    } finally {
      await app.close();
    }
  }
  {
    const dataDir = path.join(locomoDir, "speaker");
    const manifest = JSON.parse(await readFile(path.join(dataDir, "bench-manifest.json"), "utf8")) as { diaIdOf: Array<[string, string]> };
    const diaIdOf = new Map(manifest.diaIdOf);
    const app = await startApp(loadConfig({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "warn", AGENTMEM_ADMIN_KEY: adminKey }));
    try {
      await settleIndex(app);
      const ws = await workspaceIdOf(app, "locomo");
      for (const c of await loadLocomo("/work/shared/data/locomo/locomo10.json")) {
        for (const q of c.questions) {
          if (q.category < 1 || q.category > 4 || q.evidence.length === 0) continue;
          const cands = await candidatesOf(app, ws, q.question, [`conv-${c.index}`], diaIdOf);
          asked.push({ set: "locomo", heldOut: c.index >= 5, expect: q.evidence, cands });
        }
      }
    } finally {
      await app.close();
    }
  }
  return asked;
}

type Rule = (cands: readonly Cand[]) => number[];

const rules: Record<string, Rule> = {
  semantic: (cs) => cs.map((c) => (c.semantic ? Math.max(0, c.cosine) * c.multiplier : -1)),
  keyword: (cs) => cs.map((c) => (c.keyword ? keywordRelevance(c.bm25) * c.multiplier : -1)),
  hybrid: (cs) => cs.map((c) => relevance("hybrid", c.cosine, c.bm25, c.informativeness, c.queryCoverage) * c.multiplier),
  "hybrid without the coverage scale": (cs) => cs.map((c) => relevance("hybrid", c.cosine, c.bm25, c.informativeness, 1) * c.multiplier),
  "previous hybrid (0.35 cosine + 0.45 keyword + 0.2 informativeness)": (cs) => linear(0.35, 0.45, 0.2)(cs),
};

/** The families of rules compared on the tuning splits (--grid). */
function linear(ws: number, wk: number, wi: number): Rule {
  return (cs) => cs.map((c) => (ws * Math.max(0, c.cosine) + wk * keywordRelevance(c.bm25) + wi * c.informativeness) * c.multiplier);
}
/**
 * Evidence from both searches, discounted (down to `floor`) for memories that say little; with `covered`,
 * the keyword evidence scaled by the share of the query's terms the memory holds (coverageScale).
 */
function discounted(ws: number, floor: number, power: number, covered = false): Rule {
  return (cs) =>
    cs.map(
      (c) =>
        (ws * Math.max(0, c.cosine) + (1 - ws) * keywordRelevance(c.bm25) * (covered ? coverageScale(c.queryCoverage) : 1)) *
        (floor + (1 - floor) * c.informativeness ** power) *
        c.multiplier,
    );
}
/** Each side divided by its best score in this query. */
function perQueryMax(ws: number, wk: number, wi: number): Rule {
  return (cs) => {
    let maxCos = 0;
    let maxBm25 = 0;
    for (const c of cs) {
      maxCos = Math.max(maxCos, c.cosine);
      maxBm25 = Math.max(maxBm25, c.bm25);
    }
    const part = (v: number, max: number) => (max > 0 ? Math.max(0, v) / max : 0);
    return cs.map((c) => (ws * part(c.cosine, maxCos) + wk * part(c.bm25, maxBm25) + wi * c.informativeness) * c.multiplier);
  };
}
/** Reciprocal rank fusion, weight ws on the semantic ranks, plus informativeness. */
function rankFusion(k: number, ws: number, wi: number): Rule {
  return (cs) => {
    const byCos = cs.map((_, i) => i).filter((i) => cs[i]!.semantic).sort((x, y) => cs[y]!.cosine - cs[x]!.cosine);
    const byBm25 = cs.map((_, i) => i).filter((i) => cs[i]!.keyword).sort((x, y) => cs[y]!.bm25 - cs[x]!.bm25);
    const out = cs.map((c) => (wi * c.informativeness) / (k + 1));
    byCos.forEach((i, r) => (out[i]! += ws / (k + r + 1)));
    byBm25.forEach((i, r) => (out[i]! += (1 - ws) / (k + r + 1)));
    return out.map((v, i) => v * cs[i]!.multiplier);
  };
}

function grid(): Array<[string, Rule]> {
  const out: Array<[string, Rule]> = [];
  const steps = [0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6];
  for (const ws of steps) for (const wk of steps) for (const wi of [0, 0.1, 0.15, 0.2, 0.25]) out.push([`linear ${ws}/${wk}/${wi}`, linear(ws, wk, wi)]);
  for (const ws of steps) for (const wk of steps) for (const wi of [0, 0.1, 0.2]) out.push([`per-query max ${ws}/${wk}/${wi}`, perQueryMax(ws, wk, wi)]);
  for (const ws of [0.3, 0.4, 0.5, 0.6, 0.7]) for (const floor of [0, 0.2, 0.4, 0.5, 0.6, 0.8, 1]) for (const p of [1, 2]) {
    out.push([`discounted ${ws}/${floor}/p${p}`, discounted(ws, floor, p)]);
    out.push([`discounted ${ws}/${floor}/p${p} by coverage`, discounted(ws, floor, p, true)]);
  }
  for (const k of [1, 10, 60]) for (const ws of [0.2, 0.3, 0.5, 0.7]) for (const wi of [0, 0.5, 1]) out.push([`rank fusion k=${k} ${ws}/${wi}`, rankFusion(k, ws, wi)]);
  return out;
}

function evaluate(asked: readonly Asked[], rule: Rule) {
  const ranks = asked.map((a) => {
    const scores = rule(a.cands);
    const order = a.cands.map((_, i) => i).filter((i) => a.cands[i]!.valid && scores[i]! >= 0).sort((x, y) => scores[y]! - scores[x]!);
    const at = order.slice(0, 10).findIndex((i) => a.expect.includes(a.cands[i]!.label));
    return at < 0 ? null : at + 1;
  });
  const hit = (k: number) => ranks.filter((r) => r !== null && r <= k).length / Math.max(1, ranks.length);
  return { n: ranks.length, hit1: hit(1), hit5: hit(5), hit10: hit(10) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { "locomo-dir": { type: "string" }, features: { type: "string", default: "/tmp/agentmem-fusion-features.json" }, collect: { type: "boolean", default: false }, grid: { type: "boolean", default: false } },
  });
  let asked: Asked[];
  if (values.collect || !existsSync(values.features)) {
    if (!values["locomo-dir"]) throw new Error("--locomo-dir is required to collect features");
    asked = await collect(values["locomo-dir"]);
    await writeFile(values.features, JSON.stringify(asked));
  } else {
    asked = JSON.parse(await readFile(values.features, "utf8")) as Asked[];
    if (asked.some((a) => a.cands.some((c) => typeof c.queryCoverage !== "number"))) {
      throw new Error(`${values.features} was collected before candidates kept their query coverage: run again with --collect`);
    }
  }
  const f3 = (v: number) => v.toFixed(3).replace(/^0\./, ".");
  const tune = (set: Asked["set"]) => asked.filter((a) => a.set === set && !a.heldOut);
  const shown: Array<[string, Rule]> = Object.entries(rules);
  if (values.grid) {
    // Chosen on the tuning splits only: hit@1 + hit@5 of both sets, LoCoMo any@10 at least .73.
    const scored = grid().map(([name, rule]) => {
      const a = evaluate(tune("agent-facts"), rule);
      const l = evaluate(tune("locomo"), rule);
      return { name, rule, score: a.hit1 + a.hit5 + l.hit1 + l.hit5 - (l.hit10 < 0.73 ? 10 : 0) };
    });
    scored.sort((x, y) => y.score - x.score);
    console.log(`grid: ${scored.length} rules; best on the tuning splits first`);
    for (const r of scored.slice(0, 10)) shown.push([`${r.name} (tune score ${r.score.toFixed(3)})`, r.rule]);
  }
  const table = [["rule", "set", "split", "n", "hit@1", "hit@5", "hit@10"]];
  for (const [name, rule] of shown) {
    for (const set of ["agent-facts", "locomo"] as const) {
      for (const heldOut of [false, true]) {
        const m = evaluate(asked.filter((a) => a.set === set && a.heldOut === heldOut), rule);
        table.push([name, set, heldOut ? "held-out" : "tune", String(m.n), f3(m.hit1), f3(m.hit5), f3(m.hit10)]);
      }
    }
  }
  console.log(alignedTable(table, [0, 1, 2]));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
