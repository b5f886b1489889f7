// Where a single create's server CPU goes: starts the server with V8's CPU profiler (bench/lib/cpu-profile-preload.mjs), seeds
// it, runs single creates at concurrency 8 for a fixed duration, stops the server (which writes the
// profile) and prints the self time of the main thread by phase of the create path.
//
//   npx tsx bench/create-profile.ts [--seed 3000] [--duration 20] [--out /tmp/agentmem-profile]
//
// Open the .cpuprofile files in Chrome DevTools (Performance) for the call tree. Phases are assigned by the
// source file of the deepest frame of ours (src/...) on each sample's stack; frames of libraries called
// from our code count toward the file that called them.

import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { startServer } from "./lib/server.js";
import { closedLoop, CallFailure } from "./lib/closed-loop.js";
import { Recorder } from "./lib/stats.js";
import { postJson } from "./lib/http-json.js";
import { syntheticMemory } from "./lib/synthetic.js";
import { untilIndexed } from "./lib/server-metrics.js";
import { alignedTable } from "./lib/table.js";
import { cpuByPhase } from "./lib/cpu-profile-phases.js";

const { values } = parseArgs({
  options: {
    seed: { type: "string", default: "3000" },
    duration: { type: "string", default: "20" },
    out: { type: "string", default: "/tmp/agentmem-profile" },
  },
});
const outDir = values.out!;
mkdirSync(outDir, { recursive: true });
const before = new Set(readdirSync(outDir));
const preload = new URL("./lib/cpu-profile-preload.mjs", import.meta.url).pathname;
const server = await startServer(undefined, { NODE_OPTIONS: `--import ${preload}`, CPU_PROFILE_DIR: outDir });
const container = "bench-1";
const path = "/api/v1/agent/memories";
let created = 0;
try {
  const key = await server.createKey("bench", container);
  const post = async (body: unknown) => {
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
const { byPhase, totalUs } = cpuByPhase(JSON.parse(readFileSync(`${outDir}/${profile}`, "utf8")), new URL("../src/", import.meta.url).href);
console.error(`CPU ${cpus()[0]?.model} x${cpus().length}; load ${loadavg().map((x) => x.toFixed(2)).join(" ")}; ${created} single creates; profile ${outDir}/${profile}`);
const rows = [...byPhase.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40);
console.log(
  alignedTable([
    ["phase", "CPU ms", "ms per create", "share"],
    ...rows.map(([k, v]) => [k, (v / 1000).toFixed(0), (v / 1000 / Math.max(1, created)).toFixed(2), `${((100 * v) / totalUs).toFixed(1)}%`]),
    ["total (main thread, not idle)", (totalUs / 1000).toFixed(0), (totalUs / 1000 / Math.max(1, created)).toFixed(2), "100%"],
  ]),
);
