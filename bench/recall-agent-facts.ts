// Recall quality on short agent memories (bench/data/agent-facts/, see bench/lib/agent-facts.ts).
//
//   npx tsx bench/recall-agent-facts.ts [--vector lancedb|pgvector] [--show-misses]
//
// Starts a server in this process (PGlite in memory, LanceDB or pgvector), stores the 152 memories one
// by one through REST (contradiction detection on, as for any agent), then recalls every question in
// each search mode (limit 10, the default) over the whole workspace. hit@k: an expected memory is in the
// top k. Every fourth question is held out. Scenario checks: after "The user lives in Berlin" →
// "The user moved to Munich", "where does the user live?" ranks Munich first in hybrid; and an exact
// identifier (ticket, error code, booking reference) ranks its memory first in hybrid although a near
// miss shares most of its characters. Writes bench/results/recall-agent-facts.json.

import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { ingestAgentFacts, loadAgentFacts, postJson } from "./lib/agent-facts.js";
import { settleIndex } from "./lib/settle-index.js";
import { alignedTable } from "./lib/table.js";

const modes = ["semantic", "keyword", "hybrid"] as const;
type Mode = (typeof modes)[number];

/** Scenario checks: the query, and the memory that must come first in hybrid. */
const scenarios: Array<{ name: string; query: string; first: string }> = [
  { name: "contradiction: current city first", query: "where does the user live?", first: "f-live-munich" },
  { name: "ticket id", query: "PAY-2291", first: "l-pay2291" },
  { name: "ticket id in a question", query: "what was PAY-2219 about?", first: "l-pay2219" },
  { name: "error code", query: "E1430", first: "l-e1430" },
  { name: "error code in a question", query: "what does error E1403 mean?", first: "l-e1403" },
  { name: "build error code", query: "ZX-4711", first: "l-zx4711" },
  { name: "booking reference", query: "K7QX2P", first: "b-flight" },
];

interface Row {
  query: string;
  heldOut: boolean;
  /** 1-based rank of the first expected memory within the top 10; null when absent. */
  rank: Record<Mode, number | null>;
  top: Record<Mode, string[]>;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { vector: { type: "string", default: "lancedb" }, "show-misses": { type: "boolean", default: false } } });
  if (values.vector !== "lancedb" && values.vector !== "pgvector") throw new Error("--vector must be lancedb or pgvector");
  const adminKey = `bench-admin-${randomBytes(16).toString("hex")}`;
  const app = await startApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: "memory://", LOG_LEVEL: "warn", AGENTMEM_ADMIN_KEY: adminKey, VECTOR_BACKEND: values.vector }),
  );
  try {
    const { memories, questions } = await loadAgentFacts();
    const started = performance.now();
    const facts = await ingestAgentFacts(app.url, adminKey, memories);
    await settleIndex(app);
    console.error(`stored ${memories.length} memories in ${((performance.now() - started) / 1000).toFixed(1)} s; shadowed: ${facts.shadowed.join(", ") || "none"}`);

    const recall = async (query: string, mode: Mode): Promise<string[]> => {
      const body = await postJson(`${app.url}/api/v1/agent/recall`, facts.key, { query, searchMode: mode, limit: 10, includeReceipt: false });
      return (body.memories as Array<{ id: string }>).map((m) => facts.keyOf.get(m.id) ?? m.id);
    };
    const rows: Row[] = [];
    for (const q of questions) {
      const row: Row = { query: q.query, heldOut: q.heldOut, rank: {} as Row["rank"], top: {} as Row["top"] };
      for (const mode of modes) {
        const top = await recall(q.query, mode);
        const at = top.findIndex((k) => q.expect.includes(k));
        row.rank[mode] = at < 0 ? null : at + 1;
        row.top[mode] = top;
      }
      rows.push(row);
    }
    const checks = [];
    for (const s of scenarios) {
      const top = await recall(s.query, "hybrid");
      checks.push({ ...s, got: top[0] ?? null, pass: top[0] === s.first });
    }

    const splits = [
      ["dev", rows.filter((r) => !r.heldOut)],
      ["held-out", rows.filter((r) => r.heldOut)],
    ] as const;
    const hit = (rs: readonly Row[], mode: Mode, k: number) => rs.filter((r) => r.rank[mode] !== null && r.rank[mode]! <= k).length / rs.length;
    const mrr = (rs: readonly Row[], mode: Mode) => rs.reduce((s, r) => s + (r.rank[mode] ? 1 / r.rank[mode]! : 0), 0) / rs.length;
    const f3 = (v: number) => v.toFixed(3).replace(/^0\./, ".");
    const table = [["split", "n", "mode", "hit@1", "hit@5", "hit@10", "MRR@10"]];
    const metrics: Record<string, Record<Mode, { hit1: number; hit5: number; hit10: number; mrr10: number }>> = {};
    for (const [split, rs] of splits) {
      metrics[split] = {} as (typeof metrics)[string];
      for (const mode of modes) {
        const m = { hit1: hit(rs, mode, 1), hit5: hit(rs, mode, 5), hit10: hit(rs, mode, 10), mrr10: mrr(rs, mode) };
        metrics[split]![mode] = m;
        table.push([split, String(rs.length), mode, f3(m.hit1), f3(m.hit5), f3(m.hit10), f3(m.mrr10)]);
      }
    }
    console.log(`agent-facts (${values.vector}): ${memories.length} memories, ${questions.length} questions`);
    console.log(alignedTable(table, [0, 2]));
    console.log("\nScenario checks (hybrid, first result):");
    for (const c of checks) console.log(`  ${c.pass ? "pass" : "FAIL"}  ${c.name}: "${c.query}" → ${c.got} (want ${c.first})`);
    if (values["show-misses"]) {
      console.log("\nQuestions hybrid does not answer first:");
      for (const r of rows) if (r.rank.hybrid !== 1) console.log(`  ${r.heldOut ? "[held-out] " : ""}${r.query}: ranks s=${r.rank.semantic} k=${r.rank.keyword} h=${r.rank.hybrid}; top ${r.top.hybrid.slice(0, 3).join(", ")}`);
    }
    const file = fileURLToPath(new URL("results/recall-agent-facts.json", import.meta.url));
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify({ vector: values.vector, shadowed: facts.shadowed, metrics, scenarios: checks, questions: rows }, null, 2) + "\n");
    console.log(`\nwritten to ${file}`);
  } finally {
    await app.close();
  }
}


main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
