// The cost of creating memories at a seeded size: single creates at concurrency 1 and 8, and batches of
// 100, with contradiction detection on (the default), against the server of a checkout started as
// bench/lib/server.ts starts it (sh src/start.sh: PGlite + LanceDB, the built-in model).
//
//   npx tsx bench/create-cost.ts [--repo DIR] [--label NAME] [--seed 10000] [--duration 25] [--batch-duration 40]
//
// --repo is a checkout to measure (default: this one): run it against a worktree of an earlier commit
// and of this one, alternating (A B B A …), to compare two versions side by side in one sitting.
// Seed: syntheticMemory(i, 1) for i < --seed, REST batches of 100, 4 in flight, then a wait until the
// indexer's backlog is 0. Warm-up: 20 single creates, untimed. Each phase creates new facts
// syntheticMemory(j, 2) (the same vocabularies, so many restate or update seeded subjects) for a fixed
// duration and is followed by a wait for the indexer. Per phase: p50/p95 per request, memories/s, the
// contradictions the responses report, the server's CPU per memory by thread (main, LanceDB, other, the
// model processes), and the event loop's worst delay (prom-client's histogram, reset by each scrape).
// Prints a table and writes bench/results/create-cost-<label>.json.

import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { execSync } from "node:child_process";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    repo: { type: "string", default: new URL("..", import.meta.url).pathname },
    label: { type: "string", default: "this" },
    seed: { type: "string", default: "10000" },
    duration: { type: "string", default: "25" },
    "batch-duration": { type: "string", default: "30" },
    out: { type: "string", default: new URL("./results", import.meta.url).pathname },
  },
});
const repo = values.repo!.replace(/\/$/, "");
const label = values.label!;
const seedN = Number(values.seed);
const durationS = Number(values.duration);
const batchDurationS = Number(values["batch-duration"]);

const lib = (f: string) => import(`${repo}/bench/lib/${f}`);
const { startServer } = await lib("server.ts");
const { Recorder } = await lib("stats.ts");
const { closedLoop, CallFailure } = await lib("closed-loop.ts");
const { postJson } = await lib("http-json.ts");
const { syntheticMemory } = await lib("synthetic.ts");
const { alignedTable } = await import("./lib/table.js");
const { untilIndexed, serverMetric } = await lib("server-metrics.ts");
const { serverCpuMs, cpuBetween, rssMb } = await lib("process-tree.ts");

const container = "bench-1";
const path = "/api/v1/agent/memories";
const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");
const sha = execSync(`git -C ${repo} rev-parse HEAD`).toString().trim();
const log = (s: string) => console.error(`[${label} ${new Date().toISOString().slice(11, 19)} load ${load()}] ${s}`);

log(`repo ${repo} @ ${sha}; CPU ${cpus()[0]?.model} x${cpus().length}`);
const t0 = performance.now();
const server = await startServer(undefined);
const stopAll = async () => { try { await server.stop(); } catch {} };
process.on("SIGINT", async () => { await stopAll(); process.exit(130); });
process.on("SIGTERM", async () => { await stopAll(); process.exit(143); });

const out: any = { label, repo, sha, cpu: cpus()[0]?.model, cores: cpus().length, seed: seedN, loadStart: loadavg(), phases: [] as any[] };
try {
  const key = await server.createKey("bench", container);
  log(`server up in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const post = async (body: unknown) => {
    const res = await postJson(server.url + path, key, JSON.stringify(body));
    if (res.status < 200 || res.status >= 300) throw new CallFailure(`HTTP ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`);
    return res.body as any;
  };
  const fact = (i: number, s: number) => ({ content: syntheticMemory(i, s), type: "fact", containers: [container] });

  // Seed.
  const ts = performance.now();
  const seedRec = new Recorder();
  const seedApiS = await closedLoop({ concurrency: 4, calls: Math.ceil(seedN / 100) }, seedRec, async (i: number) => {
    const first = i * 100;
    await post({ memories: Array.from({ length: Math.min(100, seedN - first) }, (_, k) => fact(first + k, 1)) });
  });
  if (seedRec.errors > 0) throw new Error(`seed errors ${JSON.stringify(seedRec.errorKinds)}`);
  await untilIndexed(server);
  const seedS = (performance.now() - ts) / 1000;
  out.seedApiS = seedApiS; out.seedIndexedS = seedS; out.loadAfterSeed = loadavg();
  log(`seeded ${seedN}: API ${seedApiS.toFixed(1)} s, indexed ${seedS.toFixed(1)} s (${(seedN / seedS).toFixed(0)}/s)`);

  let next = 0; // index of the next new fact (seed 2)
  // Warm-up.
  for (let i = 0; i < 20; i++) await post(fact(next++, 2));
  await untilIndexed(server);

  async function phase(name: string, concurrency: number, batch: number, dur: number) {
    const rec = new Recorder();
    let contradictions = 0, shadowed = 0, memories = 0;
    await serverMetric(server, "agentmem_nodejs_eventloop_lag_max_seconds"); // resets the histogram
    const loadBefore = loadavg();
    const cpu0 = serverCpuMs(server.pid);
    const elapsed = await closedLoop({ concurrency, durationS: dur }, rec, async () => {
      const body = batch === 1 ? fact(next++, 2) : { memories: Array.from({ length: batch }, () => fact(next++, 2)) };
      const r = await post(body);
      memories += batch;
      const cs = (r?.contradictions ?? []) as Array<{ shadowed?: boolean }>;
      contradictions += cs.length;
      shadowed += cs.filter((c) => c.shadowed).length;
    });
    const cpu1 = serverCpuMs(server.pid);
    const lagMaxMs = (await serverMetric(server, "agentmem_nodejs_eventloop_lag_max_seconds")) * 1000;
    const lagP99Ms = (await serverMetric(server, "agentmem_nodejs_eventloop_lag_p99_seconds")) * 1000;
    const loadAfter = loadavg();
    const r = rec.result({ phase: name, transport: "rest", dataSize: 0, concurrency }, elapsed, memories);
    const { children: model, ...threads } = cpuBetween(cpu0, cpu1, Math.max(1, memories), 2);
    const res = { ...r, contradictions, shadowed, cpuMsPerMemory: { ...threads, model }, lagMaxMs, lagP99Ms, loadBefore, loadAfter };
    const idx = await untilIndexed(server);
    (res as any).indexedAfterS = idx;
    out.phases.push(res);
    log(`${name}: ${r.ok} ok ${r.errors} err, ${r.reqPerS.toFixed(2)} req/s, ${r.memoriesPerS!.toFixed(1)} mem/s, p50 ${r.p50Ms.toFixed(1)} p95 ${r.p95Ms.toFixed(1)} p99 ${r.p99Ms.toFixed(1)} ms; ` +
      `contradictions ${contradictions} (shadowed ${shadowed}); CPU ms/mem main ${threads.main} lance ${threads.lancedb} other ${threads.other} model ${model}; loop max ${lagMaxMs.toFixed(0)} ms; indexer caught up ${idx.toFixed(1)} s after; errors ${JSON.stringify(r.errorKinds)}`);
  }

  await phase("single c1", 1, 1, durationS);
  await phase("single c8", 8, 1, durationS);
  await phase("batch100 c1", 1, 100, batchDurationS);
  out.rssMbEnd = rssMb(server.pid);
  out.loadEnd = loadavg();
  mkdirSync(values.out!, { recursive: true });
  writeFileSync(`${values.out}/create-cost-${label}.json`, JSON.stringify(out, null, 2) + "\n");
  console.log(
    alignedTable([
      ["phase", "p50 ms", "p95 ms", "memories/s", "shadowed", "CPU ms/memory main", "LanceDB", "model", "loop max ms"],
      ...out.phases.map((p: any) => [p.phase, p.p50Ms.toFixed(1), p.p95Ms.toFixed(1), p.memoriesPerS.toFixed(1), String(p.shadowed), String(p.cpuMsPerMemory.main), String(p.cpuMsPerMemory.lancedb), String(p.cpuMsPerMemory.model), p.lagMaxMs.toFixed(0)]),
    ]),
  );
  log(`done, written ${values.out}/create-cost-${label}.json; total ${((performance.now() - t0) / 1000).toFixed(0)} s`);
} finally {
  await stopAll();
}
process.exit(0);
