import { connect, Index } from "@lancedb/lancedb";
import { rmSync } from "node:fs";
import { Field, Schema, Utf8 } from "apache-arrow";
import { lanceSchema, toArrowTable } from "./src/recall/vector/lance-records.js";
import { syntheticMemory, syntheticQueries, prng } from "./bench/lib/synthetic.js";
const dim = 512, N = Number(process.argv[2] ?? 100000);
const dir = "/work/scratch/lance-probe"; rmSync(dir, { recursive: true, force: true });
const base = lanceSchema(dim);
const schema = new Schema([...base.fields.slice(0, -1), new Field("content", new Utf8(), false), base.fields.at(-1)!]);
const db = await connect(dir);
const table = await db.createEmptyTable("t", schema);
try { await table.createIndex("content", { config: Index.fts({ stem: true, removeStopWords: true, language: "English", asciiFolding: true, withPosition: false }) }); console.log("fts on empty ok"); } catch (e) { console.log("fts on empty failed", String(e).slice(0, 200)); }
const rnd = prng(3);
// clustered vectors: 200 centers + noise
const centers = Array.from({ length: 200 }, () => Float32Array.from({ length: dim }, () => rnd() - 0.5));
const vec = () => { const c = centers[Math.floor(rnd() * 200)]!; const v = Float32Array.from(c, (x) => x + (rnd() - 0.5) * 0.6); let n = 0; for (const x of v) n += x * x; n = Math.sqrt(n); return v.map((x) => x / n); };
const rec = (i: number) => ({ id: `mem_${String(i).padStart(8, "0")}`, workspaceId: "ws_1", containers: ["bench-1"], type: "fact", tags: [], severity: null, confidence: 0.9, state: "active", validFrom: 0, validUntil: null, createdAt: i, vector: vec(), content: syntheticMemory(i) });
let t = performance.now();
for (let s = 0; s < N; s += 5000) {
  const rs = Array.from({ length: Math.min(5000, N - s) }, (_, k) => rec(s + k));
  const at = toArrowTable(base, dim, rs);
  const withContent = at.assign(new (await import("apache-arrow")).Table({ content: (await import("apache-arrow")).vectorFromArray(rs.map((r) => r.content), new Utf8()) }));
  await table.add(withContent.select(schema.fields.map((f) => f.name)));
}
console.log("add ms", (performance.now() - t).toFixed(0));
const qs = syntheticQueries(200);
const where = "workspace_id = 'ws_1' AND array_has_any(containers, ['bench-1'])";
async function time(label: string, fn: (q: string, i: number) => Promise<unknown>) {
  const ms: number[] = [];
  for (let i = 0; i < 60; i++) { const s = performance.now(); await fn(qs[i]!, i); ms.push(performance.now() - s); }
  ms.sort((a, b) => a - b); console.log(label, "p50", ms[30]!.toFixed(1), "p95", ms[57]!.toFixed(1));
}
await time("fts unindexed rows (index made on empty)", (q) => table.query().fullTextSearch(q).where(where).select(["id", "_score"]).limit(40).toArray());
t = performance.now();
await table.optimize();
console.log("optimize ms", (performance.now() - t).toFixed(0));
for (const [c, k] of [["id", Index.btree], ["workspace_id", Index.bitmap], ["containers", Index.labelList]] as const) await table.createIndex(c, { config: k() });
t = performance.now(); await table.createIndex("vector", { config: Index.ivfFlat({ distanceType: "cosine", numPartitions: 79 }) }); console.log("ivf build ms", (performance.now() - t).toFixed(0));
await time("fts indexed", (q) => table.query().fullTextSearch(q).where(where).select(["id", "_score"]).limit(40).toArray());
await time("fts indexed + vector col", (q) => table.query().fullTextSearch(q).where(where).select(["id", "_score", "vector"]).limit(40).toArray());
const qv = () => vec();
await time("vector nprobes0", () => table.vectorSearch(qv()).distanceType("cosine").where(where).maximumNprobes(0).select(["id", "_distance"]).limit(40).toArray());
await time("vector nprobes20", () => table.vectorSearch(qv()).distanceType("cosine").where(where).nprobes(20).select(["id", "_distance"]).limit(40).toArray());
await time("vector default", () => table.vectorSearch(qv()).distanceType("cosine").where(where).select(["id", "_distance"]).limit(40).toArray());
await time("vector flat", () => table.vectorSearch(qv()).distanceType("cosine").where(where).bypassVectorIndex().select(["id", "_distance"]).limit(40).toArray());
// unindexed tail after adding rows
const extra = Array.from({ length: 1000 }, (_, k) => rec(N + k));
const at = toArrowTable(base, dim, extra);
const A = await import("apache-arrow");
await table.add(at.assign(new A.Table({ content: A.vectorFromArray(extra.map((r) => r.content), new Utf8()) })).select(schema.fields.map((f) => f.name)));
const probe = extra[5]!.content;
const r = await table.query().fullTextSearch(probe).where(where).select(["id", "_score"]).limit(3).toArray();
console.log("tail found by fts:", r.map((x) => x.id), "want", extra[5]!.id);
await time("fts with 1000 unindexed tail", (q) => table.query().fullTextSearch(q).where(where).select(["id", "_score"]).limit(40).toArray());
console.log(r[0]);
