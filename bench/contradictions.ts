// Precision and recall of the offline contradiction detector on the labelled pairs in
// bench/data/contradictions.jsonl (contradictions and near misses, every fourth pair held out from tuning).
//
//   npx tsx bench/contradictions.ts [--show-errors]
//
// Prints per-category and per-split tables and writes bench/results/contradictions.json. Pure CPU, < 1 s.

import { mkdir, readFile, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { detectContradiction, type Verdict } from "../src/memories/contradictions/rules.js";
import { alignedTable } from "./lib/table.js";

interface Pair {
  id: number;
  category: string;
  contradiction: boolean;
  older: string;
  newer: string;
  split: "dev" | "heldout";
}

interface Scored extends Pair {
  predicted: Verdict | null;
}

interface Counts {
  n: number;
  tp: number;
  fp: number;
  fn: number;
  tn: number;
}

function count(rows: Scored[]): Counts & { precision: number; recall: number; f1: number; accuracy: number } {
  const c = { n: rows.length, tp: 0, fp: 0, fn: 0, tn: 0 };
  for (const r of rows) {
    const p = r.predicted !== null;
    if (p && r.contradiction) c.tp++;
    else if (p) c.fp++;
    else if (r.contradiction) c.fn++;
    else c.tn++;
  }
  const precision = c.tp + c.fp === 0 ? NaN : c.tp / (c.tp + c.fp);
  const recall = c.tp + c.fn === 0 ? NaN : c.tp / (c.tp + c.fn);
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : NaN;
  return { ...c, precision, recall, f1, accuracy: (c.tp + c.tn) / Math.max(1, c.n) };
}

const fmt = (v: number) => (Number.isNaN(v) ? "-" : v.toFixed(3));

async function main() {
  const { values } = parseArgs({ options: { "show-errors": { type: "boolean", default: false } } });
  const text = await readFile(new URL("./data/contradictions.jsonl", import.meta.url), "utf8");
  const pairs = text.trim().split("\n").map((line) => JSON.parse(line) as Pair);
  const scored: Scored[] = pairs.map((p) => ({ ...p, predicted: detectContradiction(p.older, p.newer) }));

  const splits = { dev: scored.filter((s) => s.split === "dev"), heldout: scored.filter((s) => s.split === "heldout"), all: scored };
  const bySplit = Object.fromEntries(Object.entries(splits).map(([name, rows]) => [name, count(rows)]));
  console.log("Offline contradiction detector: labelled pairs (bench/data/contradictions.jsonl)\n");
  console.log(
    alignedTable([
      ["split", "pairs", "TP", "FP", "FN", "TN", "precision", "recall", "F1"],
      ...Object.entries(bySplit).map(([name, c]) => [name, String(c.n), String(c.tp), String(c.fp), String(c.fn), String(c.tn), fmt(c.precision), fmt(c.recall), fmt(c.f1)]),
    ]),
  );

  const categories = [...new Set(pairs.map((p) => p.category))];
  const byCategory = Object.fromEntries(
    categories.map((cat) => {
      const rows = scored.filter((s) => s.category === cat);
      return [cat, { label: rows[0]!.contradiction, all: count(rows), dev: count(rows.filter((r) => r.split === "dev")), heldout: count(rows.filter((r) => r.split === "heldout")) }];
    }),
  );
  console.log("\nBy category (contradictions: recall = found / all; near misses: false positives flagged)\n");
  console.log(
    alignedTable([
      ["category", "kind", "pairs", "flagged", "precision", "recall", "F1", "dev acc", "held-out acc"],
      ...Object.entries(byCategory).map(([cat, c]) => [
        cat,
        c.label ? "contradiction" : "near miss",
        String(c.all.n),
        String(c.all.tp + c.all.fp),
        c.label ? fmt(c.all.precision) : "-",
        c.label ? fmt(c.all.recall) : "-",
        c.label ? fmt(c.all.f1) : "-",
        fmt(c.dev.accuracy),
        fmt(c.heldout.accuracy),
      ]),
    ], [0, 1]),
  );

  const rules = [...new Set(scored.flatMap((s) => (s.predicted ? [s.predicted.rule] : [])))];
  const byRule = Object.fromEntries(
    rules.map((rule) => {
      const flagged = scored.filter((s) => s.predicted?.rule === rule);
      return [rule, { flagged: flagged.length, correct: flagged.filter((s) => s.contradiction).length }];
    }),
  );
  console.log("\nBy rule that fired (precision of each rule)\n");
  console.log(
    alignedTable([
      ["rule", "flagged", "correct", "precision"],
      ...Object.entries(byRule).map(([rule, r]) => [rule, String(r.flagged), String(r.correct), fmt(r.correct / r.flagged)]),
    ]),
  );

  const errors = scored.filter((s) => (s.predicted !== null) !== s.contradiction);
  if (values["show-errors"]) {
    console.log("\nErrors:");
    for (const e of errors) {
      console.log(`  #${e.id} [${e.split}/${e.category}] ${e.contradiction ? "missed" : "false alarm"}: "${e.older}" / "${e.newer}"${e.predicted ? ` (${e.predicted.reason})` : ""}`);
    }
  }
  await mkdir(new URL("./results/", import.meta.url), { recursive: true });
  await writeFile(
    new URL("./results/contradictions.json", import.meta.url),
    JSON.stringify({ bySplit, byCategory, byRule, errors: errors.map((e) => ({ id: e.id, split: e.split, category: e.category, expected: e.contradiction, reason: e.predicted?.reason ?? null })) }, null, 2) + "\n",
  );
}

await main();
