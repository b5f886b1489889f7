// agentmem beside mem0's open-source TypeScript library (mem0ai, in process, `infer: false`, its local
// "memory" vector store in SQLite), both on agentmem's built-in model: mem0 reaches it through a small
// OpenAI-compatible POST /v1/embeddings endpoint this script starts and counts. No LLM and no network:
// any other request mem0 sends (to the endpoint or elsewhere) fails the run.
//
//   cd bench/peers && npm ci && npm run bench -- [--facts 10000] [--queries 200] [--concurrency 8]
//                                                  [--data ../../../shared/data/agent-memory/everyday.json]
//
// Throughput and latency: --facts short agent facts (bench/lib/synthetic.ts, seed 1) added one per call at
// --concurrency calls in flight (agentmem: REST POST /api/v1/agent/memories with its defaults, detection
// on; mem0: Memory.add(text, { userId, infer: false })), then --queries searches (syntheticQueries) at
// concurrency 1 and --concurrency, limit 10 (agentmem: REST POST /api/v1/agent/recall, hybrid; mem0:
// Memory.search). RSS: the agentmem server process (its model processes apart), and this process for
// mem0 (its store lives here; the model runs in the endpoint's child processes). Quality: the everyday
// set's memories added one at a time in validFrom order (without validUntil), into a fresh container /
// store, then its questions: R@1 and R@5. The ratio column is agentmem ÷ mem0.
// Prints a table and writes bench/results/peers-mem0.json.

import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import net from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { UseLiteEmbedder } from "../../src/embeddings/use-lite-embedder.js";
import { closedLoop } from "../lib/closed-loop.js";
import { postOrFail } from "../lib/http-json.js";
import { children, rssMb } from "../lib/process-tree.js";
import { untilIndexed } from "../lib/server-metrics.js";
import { startServer } from "../lib/server.js";
import { Recorder } from "../lib/stats.js";
import { syntheticMemory, syntheticQueries } from "../lib/synthetic.js";
import { alignedTable } from "../lib/table.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    facts: { type: "string", default: "10000" },
    queries: { type: "string", default: "200" },
    concurrency: { type: "string", default: "8" },
    data: { type: "string", default: path.resolve(here, "../../../shared/data/agent-memory/everyday.json") },
    out: { type: "string", default: path.resolve(here, "../results") },
  },
});
const factCount = Number(values.facts);
const concurrency = Number(values.concurrency);
const facts = Array.from({ length: factCount }, (_, i) => syntheticMemory(i, 1));
const queries = syntheticQueries(Number(values.queries));
const everyday = JSON.parse(readFileSync(values.data!, "utf8")) as {
  memories: Array<{ id: string; type: string; content: string; validFrom: string }>;
  questions: Array<{ query: string; expect: string[] }>;
};
const inOrder = everyday.memories.map((m, i) => ({ m, i })).sort((a, b) => Date.parse(a.m.validFrom) - Date.parse(b.m.validFrom) || a.i - b.i).map(({ m }) => m);
const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");
const log = (s: string) => console.error(`[peers ${new Date().toISOString().slice(11, 19)} load ${load()}] ${s}`);

// Every TCP connection this process opens must go to the endpoint or the agentmem server.
const allowedPorts = new Set<number>();
const refused: string[] = [];
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
  const [first, second] = args as [unknown, unknown];
  const opts = (typeof first === "object" && first !== null ? first : { port: first, host: typeof second === "string" ? second : "localhost" }) as { port?: unknown; host?: string; path?: string };
  if (opts.path === undefined && Array.isArray(first) === false) {
    const host = opts.host ?? "localhost";
    const local = host === "127.0.0.1" || host === "localhost" || host === "::1";
    if (!local || !allowedPorts.has(Number(opts.port))) {
      refused.push(`${host}:${String(opts.port)}`);
      throw new Error(`bench/peers: refused a connection to ${host}:${String(opts.port)}`);
    }
  }
  return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
} as typeof connect;

// The embeddings endpoint, on agentmem's built-in model (its default model processes).
const embedder = await UseLiteEmbedder.create({ batchSize: 32, workers: 1, threads: Math.min(2, cpus().length) });
const endpoint = { calls: 0, texts: 0, unexpected: [] as string[] };
const body = async (req: IncomingMessage) => {
  const parts: Buffer[] = [];
  for await (const p of req) parts.push(p as Buffer);
  return JSON.parse(Buffer.concat(parts).toString("utf8") || "{}");
};
const embeddings = createServer(async (req, res) => {
  try {
    if (req.method !== "POST" || req.url !== "/v1/embeddings") throw new Error(`unexpected ${req.method} ${req.url}`);
    const { input, model } = await body(req);
    const texts: string[] = Array.isArray(input) ? input : [input];
    endpoint.calls++;
    endpoint.texts += texts.length;
    const vectors = await embedder.embed(texts);
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ object: "list", model, data: vectors.map((v, index) => ({ object: "embedding", index, embedding: Array.from(v) })), usage: { prompt_tokens: 0, total_tokens: 0 } }));
  } catch (err) {
    endpoint.unexpected.push(String(err));
    res.statusCode = 404;
    res.end(JSON.stringify({ error: { message: String(err) } }));
  }
});
await new Promise<void>((resolve) => embeddings.listen(0, "127.0.0.1", resolve));
const endpointPort = (embeddings.address() as net.AddressInfo).port;
allowedPorts.add(endpointPort);
const baseURL = `http://127.0.0.1:${endpointPort}/v1`;

interface Side {
  addsPerS: number;
  addP50Ms: number;
  addP95Ms: number;
  search: Record<string, { p50Ms: number; p95Ms: number; perS: number }>;
  rssMb: number;
  modelRssMb?: number;
  r1: number;
  r5: number;
}

/** Adds, searches at concurrency 1 and `concurrency`, and the quality set, through the given calls. */
async function measure(name: string, add: (text: string) => Promise<void>, search: (q: string) => Promise<void>): Promise<Omit<Side, "rssMb" | "r1" | "r5">> {
  const adds = new Recorder();
  const addS = await closedLoop({ concurrency, calls: facts.length }, adds, async (i: number) => add(facts[i]!));
  if (adds.errors > 0) throw new Error(`${name} adds failed: ${JSON.stringify(adds.errorKinds)}`);
  const a = adds.result({ phase: "add", transport: "rest", dataSize: facts.length, concurrency }, addS, facts.length);
  log(`${name}: ${facts.length} adds in ${addS.toFixed(1)} s (${a.reqPerS.toFixed(1)}/s)`);
  const out: Omit<Side, "rssMb" | "r1" | "r5"> = { addsPerS: a.reqPerS, addP50Ms: a.p50Ms, addP95Ms: a.p95Ms, search: {} };
  for (const c of [1, concurrency]) {
    const rec = new Recorder();
    const s = await closedLoop({ concurrency: c, calls: queries.length }, rec, async (i: number) => search(queries[i]!));
    if (rec.errors > 0) throw new Error(`${name} searches failed: ${JSON.stringify(rec.errorKinds)}`);
    const r = rec.result({ phase: "search", transport: "rest", dataSize: facts.length, concurrency: c }, s, queries.length);
    out.search[`c${c}`] = { p50Ms: r.p50Ms, p95Ms: r.p95Ms, perS: r.reqPerS };
    log(`${name}: search c${c} p50 ${r.p50Ms.toFixed(1)} p95 ${r.p95Ms.toFixed(1)} ms, ${r.reqPerS.toFixed(1)}/s`);
  }
  return out;
}

/** R@1 and R@5 of the everyday questions, given each question's ranked labels. */
async function quality(rank: (q: string) => Promise<string[]>): Promise<{ r1: number; r5: number }> {
  let r1 = 0, r5 = 0;
  for (const q of everyday.questions) {
    const top = await rank(q.query);
    if (q.expect.includes(top[0] ?? "")) r1++;
    if (top.slice(0, 5).some((l) => q.expect.includes(l))) r5++;
  }
  return { r1: r1 / everyday.questions.length, r5: r5 / everyday.questions.length };
}

const result: { agentmem?: Side; mem0?: Side } = {};
const dirs: string[] = [];

// agentmem: the server as deployed (npm start), REST.
{
  const server = await startServer(undefined);
  allowedPorts.add(Number(new URL(server.url).port));
  try {
    const key = await server.createKey("peers", "bench");
    const api = (p: string, b: unknown) => postOrFail(`${server.url}/api/v1/agent/${p}`, key, b);
    const m = await measure(
      "agentmem",
      async (content) => void (await api("memories", { content, type: "fact" })),
      async (query) => void (await api("recall", { query, limit: 10, includeReceipt: false })),
    );
    await untilIndexed(server);
    const rss = rssMb(server.pid);
    const modelRss = children(server.pid).reduce((sum, pid) => sum + rssMb(pid), 0);
    const qKey = await server.createKey("peers", "everyday");
    const labelOf = new Map<string, string>();
    for (const mem of inOrder) {
      const res = await postOrFail(`${server.url}/api/v1/agent/memories`, qKey, { content: mem.content, type: mem.type, validFrom: mem.validFrom });
      labelOf.set(res.ids[0], mem.id);
    }
    await untilIndexed(server);
    const q = await quality(async (query) => {
      const res = await postOrFail(`${server.url}/api/v1/agent/recall`, qKey, { query, limit: 10, includeReceipt: false });
      return (res.memories as Array<{ id: string }>).map((x) => labelOf.get(x.id) ?? x.id);
    });
    result.agentmem = { ...m, rssMb: rss, modelRssMb: modelRss, ...q };
  } finally {
    await server.stop();
  }
}

// mem0: in this process; telemetry off (read when the module loads), no history database.
{
  process.env.MEM0_TELEMETRY = "false";
  const { Memory } = await import("mem0ai/oss");
  const memoryOf = (dir: string) =>
    new Memory({
      version: "v1.1",
      disableHistory: true,
      embedder: { provider: "openai", config: { apiKey: "local", baseURL, model: "use-lite" } },
      vectorStore: { provider: "memory", config: { collectionName: "bench", dimension: embedder.info.dimensions, dbPath: path.join(dir, "vectors.db") } },
      llm: { provider: "openai", config: { apiKey: "local", baseURL, model: "none" } },
      historyDbPath: path.join(dir, "history.db"),
    } as never);
  const dir = mkdtempSync(path.join(tmpdir(), "peers-mem0-"));
  dirs.push(dir);
  const rssBefore = rssMb("self");
  const mem = memoryOf(dir);
  const m = await measure(
    "mem0",
    async (text) => void (await mem.add(text, { userId: "bench", infer: false })),
    async (query) => void (await mem.search(query, { filters: { user_id: "bench" }, topK: 10, threshold: 0 } as never)),
  );
  const rss = rssMb("self");
  const qDir = mkdtempSync(path.join(tmpdir(), "peers-mem0-"));
  dirs.push(qDir);
  const qMem = memoryOf(qDir);
  const labelOf = new Map<string, string>();
  for (const x of inOrder) {
    const res = (await qMem.add(x.content, { userId: "everyday", infer: false })) as { results: Array<{ id: string }> };
    labelOf.set(res.results[0]!.id, x.id);
  }
  const q = await quality(async (query) => {
    const res = (await qMem.search(query, { filters: { user_id: "everyday" }, topK: 10, threshold: 0 } as never)) as { results: Array<{ id: string }> };
    return res.results.map((x) => labelOf.get(x.id) ?? x.id);
  });
  result.mem0 = { ...m, rssMb: rss, ...q };
  log(`mem0: this process ${rssBefore} MB before its store, ${rss} MB after the adds and searches`);
}

await embedder.close();
embeddings.close();
for (const d of dirs) rmSync(d, { recursive: true, force: true });

const a = result.agentmem!, b = result.mem0!;
const ratio = (x: number, y: number) => (y > 0 ? `${(x / y).toFixed(2)}x` : "-");
const row = (name: string, x: number, y: number, digits = 1) => [name, x.toFixed(digits), y.toFixed(digits), ratio(x, y)];
const c = `c${concurrency}`;
console.log(
  alignedTable([
    ["", "agentmem", "mem0 (infer: false)", "agentmem ÷ mem0"],
    row(`adds/s (one per call, ${concurrency} in flight)`, a.addsPerS, b.addsPerS),
    row("add p50 ms", a.addP50Ms, b.addP50Ms),
    row("search p50 ms, c1", a.search.c1!.p50Ms, b.search.c1!.p50Ms),
    row("search p95 ms, c1", a.search.c1!.p95Ms, b.search.c1!.p95Ms),
    row(`search p50 ms, ${c}`, a.search[c]!.p50Ms, b.search[c]!.p50Ms),
    row(`search p95 ms, ${c}`, a.search[c]!.p95Ms, b.search[c]!.p95Ms),
    row(`searches/s, ${c}`, a.search[c]!.perS, b.search[c]!.perS),
    row("RSS MB (agentmem: server; mem0: its process)", a.rssMb, b.rssMb, 0),
    row("everyday R@1", a.r1, b.r1, 3),
    row("everyday R@5", a.r5, b.r5, 3),
  ]),
);
const run = {
  cpu: cpus()[0]?.model,
  cores: cpus().length,
  node: process.version,
  facts: factCount,
  queries: queries.length,
  concurrency,
  load: loadavg(),
  endpoint: { calls: endpoint.calls, texts: endpoint.texts },
  result,
};
mkdirSync(values.out!, { recursive: true });
writeFileSync(path.join(values.out!, "peers-mem0.json"), JSON.stringify(run, null, 2) + "\n");
log(`CPU ${run.cpu} x${run.cores}; agentmem model processes ${a.modelRssMb} MB; endpoint: ${endpoint.calls} calls, ${endpoint.texts} texts`);
if (endpoint.unexpected.length > 0 || refused.length > 0) {
  console.error(`mem0 made calls other than embeddings: ${[...endpoint.unexpected, ...refused].join("; ")}`);
  process.exit(1);
}
process.exit(0);
