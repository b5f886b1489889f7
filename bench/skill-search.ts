// Skill search: quality on a labelled set, and latency at scale. The real server runs in a child process
// with embedded storage (PGlite + LanceDB, the defaults) in a temporary DATA_DIR.
//
//   npx tsx bench/skill-search.ts [--size 10000] [--queries 300] [--timeout 1800] [--quality-only]
//
// (a) Quality: the 40 skills of bench/data/skills/*/SKILL.md are imported through the API, and the 154
//     task-style queries of bench/data/skills/queries.jsonl (written not to reuse their target's
//     description words) are searched in every mode; hit@1 and hit@3 per split. Every fourth query
//     (index 3, 7, ...) is held out: it was never looked at while choosing weights or embedded text.
//     Then, in this process with the same model, the embedded-text alternatives are compared by plain
//     cosine ranking, and the ranking candidates (field weights, When-to-use bullets, feedback, fusion
//     rules), each with weights chosen on the dev split.
// (b) Latency: `--size` synthetic skills are created through the API (8 requests in flight), then
//     `--queries` searches at concurrency 1, each with a query text never sent before, so every search
//     embeds its query; p50/p95/p99 of the whole REST call, per mode.
// Writes bench/results/skill-search.json.

import { readdirSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { availableParallelism, cpus, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.js";
import { createEmbedder } from "../src/embeddings/create-embedder.js";
import { bm25HalfScore, cosine } from "../src/search/scoring.js";
import { defaultMinSimilarity, hybridKeywordWeight, skillRelevance } from "../src/skills/skill-scoring.js";
import { splitSkillMd } from "../src/skills/skill-md.js";
import { embeddedText, keywordBodyChars, keywordText, whenToUseSection } from "../src/skills/skill-text.js";
import { reciprocalRankFusion, relativeToBest, weightedSum, zScoreSum, type Scores } from "./lib/fusion-candidates.js";
import { bm25Index, openLexer } from "./lib/pg-bm25.js";
import { agentClient, freshQuery, percentile, syntheticSkill, type Call } from "./lib/skills.js";
import { prng } from "./lib/synthetic.js";
import { onCleanUp, positiveOption, runBench, stopAfter } from "./lib/run.js";
import { startServer } from "./lib/server.js";
import { alignedTable } from "./lib/table.js";

const dataDir = fileURLToPath(new URL("./data/skills/", import.meta.url));
const modes = ["semantic", "keyword", "hybrid"] as const;
const sweepWeights = [0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5];
const minSimilaritySweep = [0, 0.1, 0.15, 0.18, 0.2, 0.22, 0.25, 0.28, 0.3, 0.35, 0.4, 0.45, 0.5];

interface Query {
  query: string;
  skill: string;
}

const isHeldOut = (i: number) => i % 4 === 3;

function labelledSet() {
  const skills = readdirSync(dataDir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => ({ dir: d.name, text: readFileSync(path.join(dataDir, d.name, "SKILL.md"), "utf8") }));
  const queries = readFileSync(path.join(dataDir, "queries.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Query);
  return { skills, queries };
}


interface Hits {
  hit1: number;
  hit3: number;
  n: number;
}

function score(ranked: string[][], queries: Query[], heldOut: boolean): Hits {
  let hit1 = 0;
  let hit3 = 0;
  let n = 0;
  queries.forEach((q, i) => {
    if (isHeldOut(i) !== heldOut) return;
    n++;
    if (ranked[i]![0] === q.skill) hit1++;
    if (ranked[i]!.slice(0, 3).includes(q.skill)) hit3++;
  });
  return { hit1: hit1 / n, hit3: hit3 / n, n };
}

async function quality(call: Call) {
  const { skills, queries } = labelledSet();
  for (const s of skills) await call("/import", { content: s.text, tags: ["labelled"] });
  const results: Record<string, { dev: Hits; heldOut: Hits }> = {};
  for (const mode of modes) {
    const ranked: string[][] = [];
    for (const q of queries) {
      const res = await call("/search", { query: q.query, limit: 3, searchMode: mode, tags: ["labelled"] });
      ranked.push(res.skills.map((s: { slug: string }) => s.slug));
    }
    results[mode] = { dev: score(ranked, queries, false), heldOut: score(ranked, queries, true) };
  }
  // The hybrid weight sweep: both sides' scores for every labelled skill (no floor), fused here as the server fuses them.
  const sides: Array<{ semantic: Map<string, number>; keyword: Map<string, number> }> = [];
  for (const q of queries) {
    const side = async (mode: string) =>
      new Map<string, number>(
        (await call("/search", { query: q.query, limit: 100, searchMode: mode, tags: ["labelled"], minSimilarity: 0 })).skills.map((s: { slug: string; similarity: number }) => [s.slug, s.similarity]),
      );
    sides.push({ semantic: await side("semantic"), keyword: await side("keyword") });
  }
  // Keyword mode answers keywordRelevance(bm25) = bm25 / (bm25 + half); hybrid fuses the raw BM25.
  const bm25Of = (relevance: number) => (bm25HalfScore * relevance) / (1 - relevance);
  const sweep = sweepWeights.map((w) => {
    const ranked = sides.map(({ semantic, keyword }) => {
      const best = Math.max(0, ...[...keyword.values()].map(bm25Of));
      return skills
        .map((s) => ({ slug: s.dir, score: skillRelevance("hybrid", semantic.get(s.dir) ?? 0, bm25Of(keyword.get(s.dir) ?? 0), best, w) }))
        .sort((a, b) => b.score - a.score)
        .map((r) => r.slug);
    });
    return { keywordWeight: w, dev: score(ranked, queries, false), heldOut: score(ranked, queries, true) };
  });
  // The minimum similarity: what a floor costs in hit@1, and how often it answers nothing when the right
  // skill is not in the library (each query again, its target left out), in hybrid mode at the default weight.
  const hybridScores = (query: (typeof sides)[number], without?: string) => {
    const present = skills.filter((s) => s.dir !== without);
    const best = Math.max(0, ...present.map((s) => bm25Of(query.keyword.get(s.dir) ?? 0)));
    return present
      .map((s) => ({ slug: s.dir, score: skillRelevance("hybrid", query.semantic.get(s.dir) ?? 0, bm25Of(query.keyword.get(s.dir) ?? 0), best) }))
      .sort((a, b) => b.score - a.score);
  };
  const withTarget = sides.map((side) => hybridScores(side)[0]!);
  const withoutTarget = sides.map((side, i) => hybridScores(side, queries[i]!.skill)[0]!);
  const floors = minSimilaritySweep.map((floor) => {
    const split = (heldOut: boolean) => {
      const at = queries.map((_, i) => i).filter((i) => isHeldOut(i) === heldOut);
      const hit1 = at.filter((i) => withTarget[i]!.slug === queries[i]!.skill && withTarget[i]!.score >= floor).length / at.length;
      const emptyWithoutTarget = at.filter((i) => withoutTarget[i]!.score < floor).length / at.length;
      return { hit1, emptyWithoutTarget };
    };
    return { floor, dev: split(false), heldOut: split(true) };
  });
  return { skills: skills.length, queries: queries.length, results, sweep, floors };
}

/** The bullets of a body's "When to use" section, one text each (the labelled skills all have one). */
function whenToUseBullets(body: string): string[] {
  const out: string[] = [];
  let inside = false;
  for (const line of body.split("\n")) {
    if (/^#{1,6}\s/.test(line)) {
      if (inside) break;
      inside = /^#{1,6}\s+when\s+to\s+use\b/i.test(line);
    } else if (inside && /^\s*[-*+]\s+/.test(line)) {
      out.push(line.replace(/^\s*[-*+]\s+/, "").trim());
    }
  }
  return out;
}

const rankedBy = (sc: Scores, slugs: string[]) =>
  sc.map((row) =>
    row
      .map((s, j) => ({ slug: slugs[j]!, s }))
      .sort((a, b) => b.s - a.s || (a.slug < b.slug ? -1 : 1))
      .map((r) => r.slug),
  );

/**
 * In this process, with the same model: (1) what the server embeds against texts it does not, by plain
 * cosine; (2) ranking candidates, each with its weights chosen on the dev split (the held-out split was
 * scored once per finished candidate). BM25 here is the pgvector backend's (Postgres English lexemes).
 */
async function inProcessAlternatives() {
  const { skills, queries } = labelledSet();
  const embedder = await createEmbedder(loadConfig({ DATA_DIR: "memory://", EMBEDDING_WORKERS: "1" }));
  const lexer = await openLexer();
  try {
    const parsed = skills.map((s) => {
      const split = splitSkillMd(s.text) as { yaml: string; body: string };
      const description = JSON.parse(/description: (".*")/.exec(split.yaml)![1]!) as string;
      return { slug: s.dir, description, body: split.body };
    });
    const slugs = parsed.map((s) => s.slug);
    const hitsOf = (ranked: string[][]) => ({ dev: score(ranked, queries, false), heldOut: score(ranked, queries, true) });
    const variants: Record<string, (s: (typeof parsed)[number]) => string> = {
      "name + description + When to use (server)": (s) => embeddedText({ name: s.slug, description: s.description, content: s.body }),
      "name + description": (s) => `${s.slug}\n${s.description}`,
      "name + description + body[:600]": (s) => `${s.slug}\n${s.description}\n${s.body.slice(0, 600)}`,
      "description only": (s) => s.description,
    };
    const queryVectors = await embedder.embed(queries.map((q) => q.query));
    const cosinesTo = (vectors: Float32Array[]): Scores => queryVectors.map((qv) => vectors.map((v) => cosine(qv, v)));
    const embeddedTexts: Record<string, { dev: Hits; heldOut: Hits }> = {};
    for (const [name, text] of Object.entries(variants)) {
      embeddedTexts[name] = hitsOf(rankedBy(cosinesTo(await embedder.embed(parsed.map(text))), slugs));
    }

    const serverVectors = await embedder.embed(parsed.map(variants["name + description + When to use (server)"]!));
    const main = cosinesTo(serverVectors);
    const bullets = parsed.map((s) => whenToUseBullets(s.body));
    const bulletVectors = await embedder.embed(bullets.flat());
    const meanBullet: Scores = queryVectors.map((qv) => {
      let k = 0;
      return bullets.map((b) => {
        const sims = bulletVectors.slice(k, (k += b.length)).map((v) => cosine(qv, v));
        return sims.length === 0 ? 0 : sims.reduce((a, x) => a + x, 0) / sims.length;
      });
    });
    const mainAndBullets = main.map((r, i) => r.map((c, j) => (c + meanBullet[i]![j]!) / 2));
    const queryLexemes = await Promise.all(queries.map(async (q) => new Map([...(await lexer.lexemes(q.query)).keys()].map((w) => [w, 1]))));
    const bm25Over = async (text: (s: (typeof parsed)[number]) => string) => {
      const index = bm25Index(await Promise.all(parsed.map((s) => lexer.lexemes(text(s)))));
      return queryLexemes.map(index);
    };
    const whole = await bm25Over((s) => keywordText({ name: s.slug, description: s.description, content: s.body }));
    const bodyOnly = await bm25Over((s) => s.body.slice(0, keywordBodyChars));
    const shortFieldsTwice = await bm25Over((s) => {
      const short = `${s.slug} ${s.description} ${whenToUseSection(s.body)} `;
      return `${short}${short}${s.body.slice(0, keywordBodyChars)}`;
    });
    // Pseudo-relevance feedback: the query vector moved halfway towards the best hybrid skill's vector.
    const firstFused = weightedSum(main, relativeToBest(whole), hybridKeywordWeight);
    const feedback: Scores = queryVectors.map((qv, i) => {
      const best = firstFused[i]!.indexOf(Math.max(...firstFused[i]!));
      const moved = qv.map((x, d) => x + 0.5 * serverVectors[best]![d]!);
      return serverVectors.map((v) => cosine(moved, v));
    });
    const candidates: Record<string, Scores> = {
      [`hybrid, keyword weight ${hybridKeywordWeight} (server)`]: weightedSum(main, relativeToBest(whole), hybridKeywordWeight),
      "hybrid, keyword weight 0.2": weightedSum(main, relativeToBest(whole), 0.2),
      "BM25 over the body only, weight 0.35": weightedSum(main, relativeToBest(bodyOnly), 0.35),
      "BM25 with name, description, When to use twice": weightedSum(main, relativeToBest(shortFieldsTwice), hybridKeywordWeight),
      "cosine: mean of server text and When-to-use bullets": weightedSum(mainAndBullets, relativeToBest(whole), hybridKeywordWeight),
      "query vector + 0.5 x best hybrid skill's (feedback)": weightedSum(feedback, relativeToBest(whole), hybridKeywordWeight),
      "reciprocal rank fusion k 60, keyword 0.5": reciprocalRankFusion(main, whole, 0.5),
      "z-score fusion, keyword 0.5": zScoreSum(main, whole, 0.5),
      "z-score fusion, bullets in cosine, keyword 0.4": zScoreSum(mainAndBullets, whole, 0.4),
    };
    const ranking = Object.fromEntries(Object.entries(candidates).map(([name, sc]) => [name, hitsOf(rankedBy(sc, slugs))]));
    return { embeddedTexts, ranking };
  } finally {
    await lexer.close();
    await embedder.close();
  }
}


async function load(call: Call, size: number): Promise<{ seconds: number; perSecond: number }> {
  const rand = prng(42);
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < size; i = next++) await call("", syntheticSkill(i, rand, "synthetic"));
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { seconds, perSecond: size / seconds };
}

interface Latency {
  p50: number;
  p95: number;
  p99: number;
  n: number;
  /** The server's own split (`_meta`), p50/p95: embedding the query, and the rest of the search. */
  embed: { p50: number; p95: number };
  search: { p50: number; p95: number };
}

async function latency(call: Call, queries: number) {
  const rand = prng(7);
  const out: Record<string, Latency> = {};
  for (const mode of modes) {
    const times: number[] = [];
    const embed: number[] = [];
    const search: number[] = [];
    for (let i = 0; i < queries; i++) {
      // A text never sent before: the server embeds every query.
      const query = freshQuery(rand, mode, i);
      const t = performance.now();
      const res = await call("/search", { query, limit: 10, searchMode: mode });
      times.push(performance.now() - t);
      embed.push(res._meta.embedMs);
      search.push(res._meta.searchMs);
    }
    const p50p95 = (xs: number[]) => (xs.sort((a, b) => a - b), { p50: percentile(xs, 50), p95: percentile(xs, 95) });
    times.sort((a, b) => a - b);
    out[mode] = { p50: percentile(times, 50), p95: percentile(times, 95), p99: percentile(times, 99), n: times.length, embed: p50p95(embed), search: p50p95(search) };
  }
  return out;
}

/** Loads `size` synthetic skills, then measures search latency in every mode; prints both. */
async function measureScale(call: Call, size: number, queries: number, labelled: number) {
  const loaded = await load(call, size);
  console.log(`\nloaded ${size} synthetic skills through the API in ${loaded.seconds.toFixed(0)} s (${loaded.perSecond.toFixed(0)} skills/s, searchable on answer)`);
  const lat = await latency(call, queries);
  console.log(`latency at ${size + labelled} skills, concurrency 1, fresh queries (query embedding included), REST:`);
  console.log(
    alignedTable([
      ["mode", "p50 ms", "p95 ms", "p99 ms", "n", "embed p50/p95", "search p50/p95"],
      ...modes.map((m) => {
        const l = lat[m]!;
        return [m, l.p50.toFixed(1), l.p95.toFixed(1), l.p99.toFixed(1), String(l.n), `${l.embed.p50.toFixed(1)}/${l.embed.p95.toFixed(1)}`, `${l.search.p50.toFixed(1)}/${l.search.p95.toFixed(1)}`];
      }),
    ]),
  );
  return { load: loaded, latency: lat };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      size: { type: "string", default: "10000" },
      queries: { type: "string", default: "300" },
      timeout: { type: "string", default: "1800" },
      "quality-only": { type: "boolean", default: false },
    },
  });
  const size = positiveOption("size", values.size);
  const queries = positiveOption("queries", values.queries);
  stopAfter(positiveOption("timeout", values.timeout));
  const machine = { cores: availableParallelism(), cpu: cpus()[0]?.model ?? "unknown", node: process.version, loadAvg1m: loadavg()[0]! };
  console.log(`machine: ${machine.cores} cores (${machine.cpu}), node ${machine.node}, load ${machine.loadAvg1m.toFixed(2)}`);

  const server = await startServer(undefined);
  onCleanUp(() => server.stop());
  const call = agentClient(server.url, await server.createKey("bench", "bench-1"), "skills");

  const q = await quality(call);
  const pct = (x: number) => x.toFixed(2);
  console.log(`\nquality: ${q.skills} skills, ${q.queries} queries (dev ${q.queries - Math.floor(q.queries / 4)}, held out ${Math.floor(q.queries / 4)})`);
  console.log(
    alignedTable([
      ["mode", "dev hit@1", "dev hit@3", "held-out hit@1", "held-out hit@3"],
      ...modes.map((m) => [m, pct(q.results[m]!.dev.hit1), pct(q.results[m]!.dev.hit3), pct(q.results[m]!.heldOut.hit1), pct(q.results[m]!.heldOut.hit3)]),
    ]),
  );

  console.log(`\nhybrid keyword weight (server default ${hybridKeywordWeight}), chosen on the dev split:`);
  console.log(
    alignedTable([
      ["keyword weight", "dev hit@1", "dev hit@3", "held-out hit@1", "held-out hit@3"],
      ...q.sweep.map((r) => [String(r.keywordWeight), pct(r.dev.hit1), pct(r.dev.hit3), pct(r.heldOut.hit1), pct(r.heldOut.hit3)]),
    ]),
  );

  console.log(`\nminimum similarity (server default ${defaultMinSimilarity}), hybrid: hit@1, and answers left empty when the right skill is absent`);
  console.log(
    alignedTable([
      ["floor", "dev hit@1", "dev empty w/o target", "held-out hit@1", "held-out empty w/o target"],
      ...q.floors.map((r) => [String(r.floor), pct(r.dev.hit1), pct(r.dev.emptyWithoutTarget), pct(r.heldOut.hit1), pct(r.heldOut.emptyWithoutTarget)]),
    ]),
  );

  let scale: { load: Awaited<ReturnType<typeof load>>; latency: Awaited<ReturnType<typeof latency>> } | undefined;
  if (!values["quality-only"]) scale = await measureScale(call, size, queries, q.skills);
  await server.stop();

  const alternatives = await inProcessAlternatives();
  const hitsTable = (label: string, rows: Record<string, { dev: Hits; heldOut: Hits }>) =>
    alignedTable([
      [label, "dev hit@1", "dev hit@3", "held-out hit@1", "held-out hit@3"],
      ...Object.entries(rows).map(([name, r]) => [name, pct(r.dev.hit1), pct(r.dev.hit3), pct(r.heldOut.hit1), pct(r.heldOut.hit3)]),
    ]);
  console.log("\nembedded text alternatives (plain cosine, use-lite, in process):");
  console.log(hitsTable("embedded text", alternatives.embeddedTexts));
  console.log("\nranking candidates (in process; BM25 over Postgres English lexemes, as the pgvector backend):");
  console.log(hitsTable("candidate", alternatives.ranking));

  const out = path.join(fileURLToPath(new URL("./results/", import.meta.url)), "skill-search.json");
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, JSON.stringify({ machine, startedAt: new Date().toISOString(), quality: q, ...(scale ? { load: { size, ...scale.load }, latency: scale.latency } : {}), alternatives }, null, 2));
  console.log(`\nwrote ${path.relative(process.cwd(), out)}`);
  return 0;
}

runBench(main);
