// Precision and recall of the offline update detector on labelled (older, newer) pairs:
//   - bench/data/contradictions.jsonl: 273 pairs, mostly one sentence frame with a slot changed; every
//     fourth pair held out from tuning (its `split`);
//   - ../shared/data/agent-memory/updates.json: 40 natural pairs (dev);
//   - bench/data/updates-dev.jsonl: 100 natural pairs written by someone who never saw the detector (dev);
//   - bench/data/updates-dev-agents.jsonl: 120 pairs in the styles of six kinds of agent, by a third writer (dev);
//   - bench/data/updates-heldout.jsonl: 90 natural pairs written by someone who never saw the detector,
//     never tuned on (held out).
// Each pair's cosine comes from the built-in model, as the service computes it for its candidates.
//
//   npx tsx bench/contradictions.ts [--show-errors] [--show-heldout-errors] [--no-embed]
//                                   [--locomo /work/shared/data/locomo/locomo10.json]
//
// --show-errors lists the errors on the dev splits (and the LoCoMo turns that would be shadowed);
// --show-heldout-errors those on the held-out splits, to read only once tuning is over. --no-embed
// scores every pair at cosine 0 (the rules alone).
//
// Prints per-set, per-category and per-rule tables and writes bench/results/contradictions.json. Then,
// when the LoCoMo file exists, a false-alarm check on natural conversation: every turn against every
// earlier turn of its conversation (no candidate search, so an upper bound), counting the turns that
// would be shadowed. Pure CPU apart from the model, about a minute.

import { access, mkdir, readFile, writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { UseLiteEmbedder } from "../src/embeddings/use-lite-embedder.js";
import { assessPair, type PairAssessment, type Verdict } from "../src/memories/contradictions/rules.js";
import { cosine } from "../src/search/scoring.js";
import { statementOf } from "../src/memories/contradictions/statement.js";
import { loadLocomo } from "./lib/locomo.js";
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
  set: string;
  similarity: number;
  assessed: PairAssessment | null;
  predicted: Verdict | null;
}

const sets = [
  { name: "contradictions.jsonl", file: new URL("./data/contradictions.jsonl", import.meta.url), split: null },
  { name: "updates.json", file: new URL("../../shared/data/agent-memory/updates.json", import.meta.url), split: "dev" as const },
  { name: "updates-dev.jsonl", file: new URL("./data/updates-dev.jsonl", import.meta.url), split: "dev" as const },
  { name: "updates-dev-agents.jsonl", file: new URL("./data/updates-dev-agents.jsonl", import.meta.url), split: "dev" as const },
  { name: "updates-heldout.jsonl", file: new URL("./data/updates-heldout.jsonl", import.meta.url), split: "heldout" as const },
];

async function loadSet(set: (typeof sets)[number]): Promise<Pair[]> {
  const text = await readFile(set.file, "utf8").catch(() => null);
  if (text === null) return [];
  const rows: Pair[] = text.trimStart().startsWith("{\n") || text.trimStart().startsWith('{"about"')
    ? (JSON.parse(text) as { pairs: Pair[] }).pairs.map((p, i) => ({ ...p, id: i + 1 }))
    : text.trim().split("\n").map((line) => JSON.parse(line) as Pair);
  return rows.map((p) => ({ ...p, split: set.split ?? p.split }));
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
  const { values } = parseArgs({
    options: {
      "show-errors": { type: "boolean", default: false },
      "show-heldout-errors": { type: "boolean", default: false },
      "no-embed": { type: "boolean", default: false },
      locomo: { type: "string", default: "/work/shared/data/locomo/locomo10.json" },
    },
  });
  const loaded = await Promise.all(sets.map(async (set) => ({ set: set.name, pairs: await loadSet(set) })));
  const embedder = values["no-embed"] ? null : await UseLiteEmbedder.create({ batchSize: 64, workers: 1, threads: 2 });
  const scoredSets: Scored[] = [];
  for (const { set, pairs } of loaded) {
    const vectors = embedder ? await embedder.embed(pairs.flatMap((p) => [p.older, p.newer])) : null;
    pairs.forEach((p, i) => {
      const similarity = vectors ? cosine(vectors[2 * i]!, vectors[2 * i + 1]!) : 0;
      const assessed = assessPair(statementOf(p.older), statementOf(p.newer), similarity);
      scoredSets.push({ ...p, set, similarity, assessed, predicted: assessed?.kind === "update" ? assessed.verdict : null });
    });
  }
  console.log("Offline update detector: labelled pairs\n");
  const bySet = Object.fromEntries(
    sets.flatMap((set) => {
      const rows = scoredSets.filter((r) => r.set === set.name);
      return rows.length === 0 ? [] : [[set.name, { dev: count(rows.filter((r) => r.split === "dev")), heldout: count(rows.filter((r) => r.split === "heldout")), all: count(rows) }]];
    }),
  );
  console.log(
    alignedTable([
      ["set", "split", "pairs", "TP", "FP", "FN", "TN", "precision", "recall", "F1", "kept", "doubtful"],
      ...Object.entries(bySet).flatMap(([name, splits]) =>
        Object.entries(splits)
          .filter(([, c]) => c.n > 0)
          .map(([split, c]) => {
            const rows = scoredSets.filter((r) => r.set === name && (split === "all" || r.split === split));
            const kinds = (k: string) => String(rows.filter((r) => r.assessed?.kind === k).length);
            return [name, split, String(c.n), String(c.tp), String(c.fp), String(c.fn), String(c.tn), fmt(c.precision), fmt(c.recall), fmt(c.f1), kinds("kept"), kinds("doubtful")];
          }),
      ),
    ]),
  );
  const scored = scoredSets.filter((r) => r.set === "contradictions.jsonl");
  const pairs = scored;

  const splits = { dev: scored.filter((s) => s.split === "dev"), heldout: scored.filter((s) => s.split === "heldout"), all: scored };
  const bySplit = Object.fromEntries(Object.entries(splits).map(([name, rows]) => [name, count(rows)]));
  console.log("\nbench/data/contradictions.jsonl by split\n");
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

  const rules = [...new Set(scoredSets.flatMap((s) => (s.predicted ? [s.predicted.rule] : [])))];
  const byRule = Object.fromEntries(
    rules.map((rule) => {
      const flagged = scoredSets.filter((s) => s.predicted?.rule === rule);
      return [rule, { flagged: flagged.length, correct: flagged.filter((s) => s.contradiction).length }];
    }),
  );
  console.log("\nBy rule that fired, every set (precision of each rule)\n");
  console.log(
    alignedTable([
      ["rule", "flagged", "correct", "precision"],
      ...Object.entries(byRule).map(([rule, r]) => [rule, String(r.flagged), String(r.correct), fmt(r.correct / r.flagged)]),
    ]),
  );

  const errors = scoredSets.filter((s) => (s.predicted !== null) !== s.contradiction);
  // Held-out errors are listed only on request, so that tuning looks at the dev split alone.
  const shown = errors.filter((e) => (e.split === "dev" && values["show-errors"]) || (e.split === "heldout" && values["show-heldout-errors"]));
  if (shown.length > 0) {
    console.log("\nErrors:");
    for (const e of shown) {
      const why = e.assessed ? ` (${e.assessed.kind}: ${e.assessed.kind === "update" ? e.assessed.verdict.reason : e.assessed.reason})` : "";
      console.log(`  ${e.set} #${e.id} [${e.split}/${e.category}] ${e.contradiction ? "missed" : "false alarm"} at cosine ${e.similarity.toFixed(2)}: "${e.older}" / "${e.newer}"${why}`);
    }
  }
  // The service compares each new memory with its CONTRADICTION_CANDIDATES (8) nearest.
  const natural = await naturalFalseAlarms(values.locomo!, values["show-errors"]!, embedder, 8);
  await embedder?.close();
  await mkdir(new URL("./results/", import.meta.url), { recursive: true });
  await writeFile(
    new URL("./results/contradictions.json", import.meta.url),
    JSON.stringify({ cpu: cpus()[0]?.model, bySet, bySplit, byCategory, byRule, natural, errors: errors.map((e) => ({ set: e.set, id: e.id, split: e.split, category: e.category, expected: e.contradiction, reason: e.predicted?.reason ?? null })) }, null, 2) + "\n",
  );
}

/**
 * Turns of LoCoMo conversations that some later turn of the same conversation would shadow. With the
 * model, as the service does it: each turn against its `candidates` nearest earlier turns, at their
 * cosine; without (--no-embed), every earlier turn at cosine 0 (the rules that need no model).
 */
async function naturalFalseAlarms(file: string, show: boolean, embedder: UseLiteEmbedder | null, candidates: number) {
  if (!(await access(file).then(() => true, () => false))) return null;
  const conversations = await loadLocomo(file);
  let turns = 0;
  let pairs = 0;
  const flagged: string[] = [];
  for (const c of conversations) {
    const texts = c.turns.map((t) => `${t.speaker}: ${t.text}`);
    const statements = texts.map(statementOf);
    const vectors = embedder ? await embedder.embed(texts) : null;
    turns += texts.length;
    const shadowed = new Set<number>();
    for (let j = 0; j < texts.length; j++) {
      const earlier = Array.from({ length: j }, (_, i) => ({ i, similarity: vectors ? cosine(vectors[i]!, vectors[j]!) : 0 }));
      const compared = vectors ? earlier.sort((a, b) => b.similarity - a.similarity).slice(0, candidates) : earlier;
      for (const { i, similarity } of compared) {
        pairs++;
        const a = assessPair(statements[i]!, statements[j]!, similarity);
        const v = a?.kind === "update" ? a.verdict : null;
        if (v && !shadowed.has(i)) {
          shadowed.add(i);
          flagged.push(`"${texts[i]}" / "${texts[j]}" (${v.rule}: ${v.reason})`);
        }
      }
    }
  }
  const how = embedder ? `each turn against its ${candidates} nearest earlier turns` : "every turn pair at cosine 0";
  console.log(`\nLoCoMo (${file}), ${how}: ${turns} turns, ${pairs} pairs; turns that would be shadowed: ${flagged.length} (${((100 * flagged.length) / turns).toFixed(2)}%)`);
  if (show) for (const f of flagged) console.log(`  ${f}`);
  return { turns, pairs, how, shadowedTurns: flagged.length, examples: flagged };
}

await main();
