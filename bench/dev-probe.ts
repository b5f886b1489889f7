import { startServer } from "./lib/server.js";
import { syntheticQueries } from "./lib/synthetic.js";
const dir = process.argv[2]!, n = Number(process.argv[3] ?? 60);
const server = await startServer(undefined, { DATA_DIR: dir, INDEXER_ENABLED: "true" });
const key = await server.createKey("bench", "bench-1");
const post = async (route: string, body: unknown) => {
  const res = await fetch(server.url + route, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
};
const qs = syntheticQueries(5000, Number(process.argv[4] ?? 11));
let qi = 0;
for (const mode of ["semantic", "keyword", "hybrid", "semantic", "keyword", "hybrid"]) {
  const lat: number[] = [], search: number[] = [], total: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const body = await post("/api/v1/agent/recall", { query: qs[qi++], searchMode: mode, limit: 10, containers: ["bench-1"], includeReceipt: false });
    lat.push(performance.now() - t); search.push(body._meta.searchMs); total.push(body._meta.totalMs);
  }
  const p = (a: number[], q: number) => [...a].sort((x, y) => x - y)[Math.floor(q * (a.length - 1))]!.toFixed(1);
  console.log(mode.padEnd(9), "client p50", p(lat, 0.5), "p95", p(lat, 0.95), "| server total p50", p(total, 0.5), "search p50", p(search, 0.5));
}
await server.stop();
