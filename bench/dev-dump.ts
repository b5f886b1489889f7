import { readFile, writeFile } from "node:fs/promises";
import { startApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { loadLocomo } from "./lib/locomo.js";
const dir = "/work/scratch/locomo/speaker";
const saved = JSON.parse(await readFile(`${dir}/bench-manifest.json`, "utf8")) as { key: string; diaIdOf: Array<[string, string]> };
const diaIdOf = new Map(saved.diaIdOf);
const app = await startApp(loadConfig({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dir, LOG_LEVEL: "warn", AGENTMEM_ADMIN_KEY: "x".repeat(40) }));
const convs = await loadLocomo("/work/shared/data/locomo/locomo10.json");
const contents = new Map((await app.db.query<{ id: string; content: string }>("select id, content || chr(1) || length(tsv)::text as content from memories")).map((r) => [r.id, r.content]));
const out: any[] = [];
const limit = Number(process.argv[2] ?? 10);
for (const c of convs) {
  const qs = c.questions.filter((q) => q.category >= 1 && q.category <= 4 && q.evidence.length > 0);
  let next = 0;
  await Promise.all([0,1,2,3,4,5].map(async () => { while (next < qs.length) { const q = qs[next++]!;
    const res = await fetch(`${app.url}/api/v1/agent/recall`, { method: "POST", headers: { authorization: `Bearer ${saved.key}`, "content-type": "application/json" }, body: JSON.stringify({ query: q.question, containers: [`conv-${c.index}`], limit, searchMode: "hybrid" }) });
    const body = await res.json() as any;
    const tr = await (await fetch(`${app.url}/api/v1/agent/recall/traces/${body._meta.traceId}`, { headers: { authorization: `Bearer ${saved.key}` } })).json() as any;
    out.push({ conv: c.index, category: q.category, question: q.question, evidence: q.evidence, candidates: tr.candidates.map((x: any) => ({ dia: diaIdOf.get(x.id), cosine: x.cosine ?? 0, bm25: x.bm25 ?? 0, content: contents.get(x.id) })) });
  }}));
}
await writeFile(`/work/scratch/dump-${limit}.json`, JSON.stringify(out));
console.log("questions", out.length);
await app.close();
