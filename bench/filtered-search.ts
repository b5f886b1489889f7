// LanceDB alone, in process: what an id prefilter costs against an over-fetch, to place the recall's
// metadata prefilter limit and the over-fetch's maxK (src/recall/metadata-candidates.ts, overfetch.ts).
//
//   npx tsx bench/filtered-search.ts [rows=100000] [lance directory: reused when it holds the rows]
//
// Loads `rows` synthetic memories (hashed vectors, bench/lib/hashing-embedder.ts) through openLanceIndex,
// optimises (IVF, full-text and scalar indexes), then prints p50/p95 of 25 searches each: semantic and
// keyword at k = 40, with an `id IN (...)` prefilter of 100 to 5,000 ids, and unfiltered at k = 160 to 10,000.

import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { openLanceIndex } from "../src/search/vector/lancedb-index.js";
import type { VectorFilter, VectorRecord } from "../src/search/vector/vector-index.js";
import { hashVector } from "./lib/hashing-embedder.js";
import { syntheticMemory, syntheticQueries } from "./lib/synthetic.js";

const n = Number(process.argv[2] ?? 100000);
const dir = process.argv[3] ?? (await mkdtemp(path.join(tmpdir(), "fb-")));
const idx = await openLanceIndex({ uri: dir, dimensions: 512 });
const pad = (i: number) => `mem_${String(i).padStart(8, "0")}`;
if ((await idx.count()) < n) {
  const t0 = performance.now();
  for (let s = 0; s < n; s += 5000) {
    const recs: VectorRecord[] = [];
    for (let i = s; i < Math.min(n, s + 5000); i++) {
      const content = syntheticMemory(i);
      recs.push({ id: pad(i), content, workspaceId: "ws", containers: ["c"], type: "fact", tags: [], severity: null, confidence: 1, state: "active", validFrom: 0, validUntil: null, createdAt: i, metadataTerms: [], vector: hashVector(content, 512) });
    }
    await idx.upsert(recs);
  }
  await idx.optimize();
  console.log(`loaded ${n} in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}
const queries = syntheticQueries(400);
let qi = 0;
const base: VectorFilter = { workspaceId: "ws", containers: ["c"] };
async function time(name: string, f: (v: Float32Array, q: string) => Promise<unknown>) {
  const ts: number[] = [];
  for (let r = 0; r < 25; r++) {
    const q = queries[qi++ % queries.length]!;
    const v = hashVector(q, 512);
    const t = performance.now();
    await f(v, q);
    ts.push(performance.now() - t);
  }
  ts.sort((a, b) => a - b);
  console.log(`${name}: p50 ${ts[12]!.toFixed(1)} p95 ${ts[23]!.toFixed(1)} ms`);
}
await time("warm", (v) => idx.search(v, base, 40));
await time("ann k=40", (v) => idx.search(v, base, 40));
await time("fts k=40", (_, q) => idx.keywordSearch(q, base, 40));
for (const m of [100, 250, 500, 1000, 2500, 5000]) {
  const ids = Array.from({ length: m }, (_, j) => pad(Math.floor((j * n) / m)));
  await time(`ann ids IN ${m}`, (v) => idx.search(v, { ...base, ids }, 40));
  await time(`fts ids IN ${m}`, (_, q) => idx.keywordSearch(q, { ...base, ids }, 40));
}
for (const k of [160, 640, 1280, 2500, 5000, 10000]) {
  await time(`ann k=${k}`, (v) => idx.search(v, base, k));
  await time(`fts k=${k}`, (_, q) => idx.keywordSearch(q, base, k));
}
console.log(dir);
await idx.close();
