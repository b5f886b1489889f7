// What searching through the vector index costs in quality: how much of an exact scan's top k the
// server's IVF index (IVF_FLAT, or IVF_RQ from defaultQuantizeFromBytes, with the server's probes) returns,
// on real USE-lite vectors, at the sizes around the row count from which memories and skills are searched
// through it (defaultAnnThreshold).
//
//   npx tsx bench/ann-agreement.ts [--sizes 1024,2048,4096,5882] [--queries 200]
//                                  [--data /work/shared/data/locomo/locomo10.json]
//
// Two corpora, each embedded by the built-in model: LoCoMo's turns ("speaker: text", the ten
// conversations in order, 5,882 in all) queried with its questions, and synthetic agent memories
// (bench/lib/synthetic.ts) queried with syntheticQueries. For each corpus and size, the first N texts are
// stored through openLanceIndex (the server's code, with its default threshold) in one container and
// optimized; each query is searched as recall searches (k = 40, its candidate pool, with the container
// filter) and by an exact scan. Agreement at k: the share of the exact top k that the search returned in
// its top k. Prints a table and writes bench/results/ann-agreement.json.

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { connect } from "@lancedb/lancedb";
import { UseLiteEmbedder } from "../src/embeddings/use-lite-embedder.js";
import { defaultAnnThreshold, openLanceIndex } from "../src/search/vector/lancedb-index.js";
import { factRecord } from "./lib/fact-record.js";
import { loadLocomo, turnContent } from "./lib/locomo.js";
import { onCleanUp, positiveOption, runBench } from "./lib/run.js";
import { syntheticMemory, syntheticQueries } from "./lib/synthetic.js";
import { alignedTable } from "./lib/table.js";

const k = 40;
const dimensions = 512;
const filter = { workspaceId: "ws_bench", containers: ["main"] };

interface Corpus {
  name: string;
  texts: string[];
  queries: string[];
}

interface Row {
  corpus: string;
  rows: number;
  index: string;
  queries: number;
  agreementAt10: number;
  agreementAt40: number;
}

async function corpora(data: string, largest: number, queries: number): Promise<Corpus[]> {
  const conversations = await loadLocomo(data);
  const turns = conversations.flatMap((c) => c.turns.map((t) => turnContent(t, "speaker")));
  const questions = conversations.flatMap((c) => c.questions.map((q) => q.question));
  // Spread over every conversation, so the questions are about all of the sizes' turns.
  const step = Math.max(1, Math.floor(questions.length / queries));
  return [
    { name: "LoCoMo turns", texts: turns, queries: questions.filter((_, i) => i % step === 0).slice(0, queries) },
    { name: "synthetic memories", texts: Array.from({ length: largest }, (_, i) => syntheticMemory(i)), queries: syntheticQueries(queries) },
  ];
}

async function measure(corpus: string, vectors: Float32Array[], queryVectors: Float32Array[], rows: number): Promise<Row> {
  const dir = await mkdtemp(path.join(tmpdir(), "agentmem-ann-"));
  try {
    const index = await openLanceIndex({ uri: dir, dimensions });
    const records = vectors
      .slice(0, rows)
      .map((vector, i) => factRecord({ id: `m${String(i).padStart(6, "0")}`, content: "", workspaceId: filter.workspaceId, containers: filter.containers, vector }));
    for (let i = 0; i < records.length; i += 1000) await index.upsert(records.slice(i, i + 1000));
    await index.optimize();
    const db = await connect(dir);
    const table = await db.openTable((await db.tableNames()).find((n) => n.startsWith("memories_"))!);
    const ann = (await table.listIndices()).find((i) => i.columns.includes("vector"))?.name ?? "none (exact scan)";
    let at10 = 0;
    let at40 = 0;
    for (const q of queryVectors) {
      const found = (await index.search(q, filter, k)).map((h) => h.id);
      const exact = (await table.vectorSearch(q).distanceType("cosine").bypassVectorIndex().select(["id", "_distance"]).limit(k).toArray()).map(
        (r) => r.id as string,
      );
      const top10 = new Set(found.slice(0, 10));
      const top40 = new Set(found);
      at10 += exact.slice(0, 10).filter((id) => top10.has(id)).length / Math.min(10, exact.length);
      at40 += exact.filter((id) => top40.has(id)).length / exact.length;
    }
    table.close();
    db.close();
    await index.close();
    return { corpus, rows, index: ann, queries: queryVectors.length, agreementAt10: at10 / queryVectors.length, agreementAt40: at40 / queryVectors.length };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      sizes: { type: "string", default: "1024,2048,4096,5882" },
      queries: { type: "string", default: "200" },
      data: { type: "string", default: "/work/shared/data/locomo/locomo10.json" },
    },
  });
  const sizes = values.sizes.split(",").map((s) => positiveOption("sizes", s.trim()));
  const queries = positiveOption("queries", values.queries);
  const embedder = await UseLiteEmbedder.create({ batchSize: 64, workers: 1, threads: availableParallelism() });
  onCleanUp(() => embedder.close());

  const results: Row[] = [];
  for (const corpus of await corpora(values.data, Math.max(...sizes), queries)) {
    const largest = Math.min(corpus.texts.length, Math.max(...sizes));
    console.error(`${corpus.name}: embedding ${largest} texts and ${corpus.queries.length} queries…`);
    const vectors = await embedder.embed(corpus.texts.slice(0, largest));
    const queryVectors = await embedder.embed(corpus.queries);
    for (const rows of sizes.filter((s) => s <= corpus.texts.length)) {
      const row = await measure(corpus.name, vectors, queryVectors, rows);
      console.error(`  ${rows} rows: ${row.index}, agreement@10 ${row.agreementAt10.toFixed(3)}, @40 ${row.agreementAt40.toFixed(3)}`);
      results.push(row);
    }
  }

  const table = [["corpus", "rows", "vector index", "queries", "agreement@10", "agreement@40"]];
  for (const r of results) table.push([r.corpus, String(r.rows), r.index, String(r.queries), r.agreementAt10.toFixed(3), r.agreementAt40.toFixed(3)]);
  console.log(`Semantic search through the index against an exact scan (index from ${defaultAnnThreshold} rows, k = ${k}, one container):`);
  console.log(alignedTable(table, [0, 2]));
  const file = fileURLToPath(new URL("./results/ann-agreement.json", import.meta.url));
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ run: { annThreshold: defaultAnnThreshold, k, sizes, queries }, results }, null, 2) + "\n");
  return 0;
}

runBench(main);
