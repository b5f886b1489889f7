// Two checkouts' create cost side by side on a shared, busy machine: both servers start (as
// bench/lib/server.ts starts them: PGlite + LanceDB, the built-in model, detection on), are seeded alike,
// then measured in alternating short phases (A B, B A, A B, …) so a change in the machine's load weighs
// on both; the table gives each side's median over its phases and the ratio B ÷ A.
//
//   npx tsx bench/create-ab.ts --a /path/to/checkout-a --b /path/to/checkout-b [--seed 3000] [--rounds 4]
//                              [--duration 15] [--concurrency 8]
//
// Seed: syntheticMemory(i, 1) for i < --seed, REST batches of 100, 2 in flight, then a wait until the
// indexer's backlog is 0. Each phase: single creates of new facts (syntheticMemory(j, 2), the same j on
// both sides) at --concurrency in flight for --duration seconds, then a wait for the indexer. Per phase:
// creates/s, p50/p95, the server's CPU per create (main thread, LanceDB's threads, the model processes).
// Prints a table and writes bench/results/create-ab.json.

import { mkdirSync, writeFileSync } from "node:fs";
import { execSync } from "node:child_process";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { alignedTable } from "./lib/table.js";

const { values } = parseArgs({
  options: {
    a: { type: "string" },
    b: { type: "string", default: new URL("..", import.meta.url).pathname },
    seed: { type: "string", default: "3000" },
    rounds: { type: "string", default: "4" },
    duration: { type: "string", default: "15" },
    concurrency: { type: "string", default: "8" },
    out: { type: "string", default: new URL("./results", import.meta.url).pathname },
  },
});
if (!values.a) throw new Error("--a is required: the checkout to compare with");
const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");
const log = (s: string) => console.error(`[ab ${new Date().toISOString().slice(11, 19)} load ${load()}] ${s}`);
const concurrency = Number(values.concurrency);

interface Phase {
  perS: number;
  p50Ms: number;
  p95Ms: number;
  mainMs: number;
  lancedbMs: number;
  modelMs: number;
}

async function side(name: string, repo: string) {
  const dir = repo.replace(/\/$/, "");
  const lib = (f: string) => import(`${dir}/bench/lib/${f}`);
  const { startServer } = await lib("server.ts");
  const { Recorder } = await lib("stats.ts");
  const { closedLoop, CallFailure } = await lib("closed-loop.ts");
  const { postJson } = await lib("http-json.ts");
  const { syntheticMemory } = await lib("synthetic.ts");
  const { untilIndexed } = await lib("server-metrics.ts");
  const { serverCpuMs, cpuBetween } = await lib("process-tree.ts");
  const sha = execSync(`git -C ${dir} rev-parse --short HEAD`).toString().trim();
  const server = await startServer(undefined);
  const key = await server.createKey("bench", "bench-1");
  const post = async (body: unknown) => {
    const res = await postJson(`${server.url}/api/v1/agent/memories`, key, JSON.stringify(body));
    if (res.status < 200 || res.status >= 300) throw new CallFailure(`HTTP ${res.status}`);
  };
  const fact = (i: number, s: number) => ({ content: syntheticMemory(i, s), type: "fact", containers: ["bench-1"] });
  return {
    name,
    sha,
    phases: [] as Phase[],
    stop: () => server.stop(),
    async seed(n: number) {
      const rec = new Recorder();
      await closedLoop({ concurrency: 2, calls: Math.ceil(n / 100) }, rec, async (i: number) => {
        await post({ memories: Array.from({ length: Math.min(100, n - i * 100) }, (_, k) => fact(i * 100 + k, 1)) });
      });
      if (rec.errors > 0) throw new Error(`${name}: seed errors ${JSON.stringify(rec.errorKinds)}`);
      await untilIndexed(server);
    },
    /** Single creates of facts first, first+1, … for the phase's duration; answers how many it created. */
    async phase(first: number): Promise<number> {
      const rec = new Recorder();
      let next = first;
      const cpu0 = serverCpuMs(server.pid);
      const elapsed = await closedLoop({ concurrency, durationS: Number(values.duration) }, rec, async () => post(fact(next++, 2)));
      const cpu1 = serverCpuMs(server.pid);
      const r = rec.result({ phase: "single", transport: "rest", dataSize: 0, concurrency }, elapsed, rec.ok);
      const cpu = cpuBetween(cpu0, cpu1, Math.max(1, rec.ok), 2);
      this.phases.push({ perS: r.reqPerS, p50Ms: r.p50Ms, p95Ms: r.p95Ms, mainMs: cpu.main, lancedbMs: cpu.lancedb, modelMs: cpu.children });
      log(`${name}: ${rec.ok} creates (${rec.errors} errors), ${r.reqPerS.toFixed(1)}/s, p50 ${r.p50Ms.toFixed(0)} p95 ${r.p95Ms.toFixed(0)} ms; CPU ms/create main ${cpu.main} LanceDB ${cpu.lancedb} model ${cpu.children}`);
      await untilIndexed(server);
      return next - first;
    },
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const loadStart = loadavg();
const a = await side("A", values.a);
const b = await side("B", values.b!);
try {
  log(`A ${values.a} @ ${a.sha}, B ${values.b} @ ${b.sha}; CPU ${cpus()[0]?.model} x${cpus().length}`);
  await a.seed(Number(values.seed));
  await b.seed(Number(values.seed));
  log(`seeded ${values.seed} each`);
  let next = 0;
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = round % 2 === 0 ? [a, b] : [b, a];
    let most = 0;
    for (const s of order) most = Math.max(most, await s.phase(next));
    next += most;
  }
  const stat = (s: typeof a, k: keyof Phase) => median(s.phases.map((p) => p[k]));
  const rows: Array<[string, keyof Phase, number]> = [
    ["single creates/s", "perS", 1],
    ["p50 ms", "p50Ms", 0],
    ["p95 ms", "p95Ms", 0],
    ["server CPU ms/create: main thread", "mainMs", 2],
    ["LanceDB threads", "lancedbMs", 2],
    ["model processes", "modelMs", 2],
  ];
  console.log(
    alignedTable([
      [`median of ${values.rounds} phases, c${concurrency}, seed ${values.seed}`, `A ${a.sha}`, `B ${b.sha}`, "B ÷ A"],
      ...rows.map(([label, k, d]) => [label, stat(a, k).toFixed(d), stat(b, k).toFixed(d), (stat(b, k) / stat(a, k)).toFixed(2)]),
    ]),
  );
  mkdirSync(values.out!, { recursive: true });
  writeFileSync(
    `${values.out}/create-ab.json`,
    JSON.stringify({ cpu: cpus()[0]?.model, cores: cpus().length, loadStart, loadEnd: loadavg(), a: { repo: values.a, sha: a.sha, phases: a.phases }, b: { repo: values.b, sha: b.sha, phases: b.phases } }, null, 2) + "\n",
  );
  log(`load average at the start ${loadStart.map((x) => x.toFixed(2)).join(" ")}, at the end ${load()}`);
} finally {
  await Promise.all([a.stop(), b.stop()]);
}
process.exit(0);
