// Where a single create's server CPU goes: starts the server (as bench/lib/server.ts does) with V8's
// sampling profiler loaded (bench/lib/cpu-profile-preload.mjs), seeds it with --seed memories (REST
// batches of 100), then profiles only the single-create phase: --duration seconds of single creates at 8
// in flight, and the indexer catching up after them. Prints the main thread's CPU per create by stage of
// the create path and by source file (bench/lib/cpu-profile-phases.ts says how samples are assigned).
//
//   npx tsx bench/create-profile.ts [--repo DIR] [--seed 3000] [--duration 20] [--out /tmp/agentmem-profile]
//
// --repo is a checkout to profile (default: this one), e.g. a worktree of an earlier commit, to compare.
// The .cpuprofile file opens in Chrome DevTools (Performance) for the call tree.

import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { closedLoop, CallFailure } from "./lib/closed-loop.js";
import { Recorder } from "./lib/stats.js";
import { postJson } from "./lib/http-json.js";
import { syntheticMemory } from "./lib/synthetic.js";
import { untilIndexed } from "./lib/server-metrics.js";
import { alignedTable } from "./lib/table.js";
import { byStage, cpuByPhase } from "./lib/cpu-profile-phases.js";

const { values } = parseArgs({
  options: {
    repo: { type: "string", default: new URL("..", import.meta.url).pathname },
    seed: { type: "string", default: "3000" },
    duration: { type: "string", default: "20" },
    out: { type: "string", default: "/tmp/agentmem-profile" },
  },
});
const outDir = values.out!;
const repo = values.repo!.replace(/\/$/, "");
const { startServer } = await import(`${repo}/bench/lib/server.ts`);
mkdirSync(outDir, { recursive: true });
const before = new Set(readdirSync(outDir));
const preload = new URL("./lib/cpu-profile-preload.mjs", import.meta.url).pathname;
const server = await startServer(undefined, { NODE_OPTIONS: `--import ${preload}`, CPU_PROFILE_DIR: outDir });
const container = "bench-1";
const path = "/api/v1/agent/memories";
let created = 0;
try {
  const key = await server.createKey("bench", container);
  const post = async (body: unknown): Promise<void> => {
    const res = await postJson(server.url + path, key, JSON.stringify(body));
    if (res.status < 200 || res.status >= 300) throw new CallFailure(`HTTP ${res.status}`);
  };
  const fact = (i: number, s: number) => ({ content: syntheticMemory(i, s), type: "fact", containers: [container] });
  const seedN = Number(values.seed);
  await closedLoop({ concurrency: 4, calls: Math.ceil(seedN / 100) }, new Recorder(), async (i: number) => {
    await post({ memories: Array.from({ length: Math.min(100, seedN - i * 100) }, (_, k) => fact(i * 100 + k, 1)) });
  });
  await untilIndexed(server);
  let next = 0;
  for (let i = 0; i < 20; i++) await post(fact(next++, 2));
  await untilIndexed(server);
  const rec = new Recorder();
  process.kill(server.pid, "SIGUSR2");
  await closedLoop({ concurrency: 8, durationS: Number(values.duration) }, rec, async () => {
    await post(fact(next++, 2));
    created++;
  });
  await untilIndexed(server);
  process.kill(server.pid, "SIGUSR2");
  await new Promise((r) => setTimeout(r, 2000));
} finally {
  await server.stop();
}

const [profile] = readdirSync(outDir).filter((f) => f.endsWith(".cpuprofile") && !before.has(f));
if (!profile) throw new Error(`no profile written in ${outDir}`);
const { byPhase, totalUs } = cpuByPhase(JSON.parse(readFileSync(`${outDir}/${profile}`, "utf8")), `file://${repo}/src/`);
console.error(`CPU ${cpus()[0]?.model} x${cpus().length}; load ${loadavg().map((x) => x.toFixed(2)).join(" ")}; ${created} single creates; profile ${outDir}/${profile}`);
const perCreate = (us: number) => (us / 1000 / Math.max(1, created)).toFixed(2);
const table = (map: Map<string, number>, first: string, top: number) =>
  alignedTable([
    [first, "CPU ms", "ms per create", "share"],
    ...[...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => [k, (v / 1000).toFixed(0), perCreate(v), `${((100 * v) / totalUs).toFixed(1)}%`]),
    ["total (main thread, not idle)", (totalUs / 1000).toFixed(0), perCreate(totalUs), "100%"],
  ]);
console.log(table(byStage(byPhase), "stage", 20));
console.log();
console.log(table(byPhase, "phase (source file or package)", 30));
