import { startServer } from "./lib/server.js";
import { syntheticMemory, syntheticQueries } from "./lib/synthetic.js";
const dir = process.argv[2]!, target = Number(process.argv[3]);
const server = await startServer(undefined, { DATA_DIR: dir });
const key = await server.createKey("bench", "bench-1");
const post = async (route: string, body: unknown) => {
  const res = await fetch(server.url + route, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
};
const from = Number(process.argv[4] ?? 0);
let next = from;
const t0 = performance.now();
await Promise.all([0, 1, 2, 3].map(async () => {
  while (next < target) {
    const first = next; next += 100;
    await post("/api/v1/agent/memories", { memories: Array.from({ length: Math.min(100, target - first) }, (_, k) => ({ content: syntheticMemory(first + k), type: "fact", containers: ["bench-1"] })) });
  }
}));
const apiS = (performance.now() - t0) / 1000;
const sentinel = `sentinel qxv${Math.random().toString(36).slice(2)} zebra lighthouse`;
const { ids } = await post("/api/v1/agent/memories", { content: sentinel, type: "fact", containers: ["bench-1"] });
for (;;) {
  const body = await post("/api/v1/agent/recall", { query: sentinel, searchMode: "semantic", limit: 1, includeReceipt: false });
  if (body.memories[0]?.id === ids[0]) break;
  await new Promise((r) => setTimeout(r, 500));
}
const s = (performance.now() - t0) / 1000;
console.log(`api ${((target - from) / apiS).toFixed(0)}/s indexed ${((target - from) / s).toFixed(1)}/s in ${s.toFixed(0)} s`);
await server.stop();
