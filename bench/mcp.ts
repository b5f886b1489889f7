// What the MCP endpoint costs on top of REST: memory get and create as REST calls and as MCP tool calls
// (memory_get, memory_create) on /mcp, against the real server in a child process (PGlite).
//
//   npx tsx bench/mcp.ts [--duration 10] [--connections 32] [--seed 1000]
//
// Every MCP call is one stateless POST of a tools/call message, as an MCP client sends it after
// initialize. Tool errors are HTTP 200 with isError, so a sample of each phase's calls is checked
// before it runs. Results are printed and written to bench/results/mcp.json.

import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { CallFailure, closedLoop } from "./lib/closed-loop.js";
import { memoryInput } from "./lib/content.js";
import { postJson } from "./lib/http-json.js";
import { formatTable, runInfoOf, writeJson } from "./lib/report.js";
import { restLoad, type RestLoad } from "./lib/rest-load.js";
import { onCleanUp, positiveOption, runBench, stopAfter } from "./lib/run.js";
import { startServer } from "./lib/server.js";
import { Recorder, type PhaseInfo, type PhaseResult } from "./lib/stats.js";

const memoriesPath = "/api/v1/agent/memories";
const mcpAccept = { accept: "application/json, text/event-stream" };

const toolCall = (i: number, name: string, args: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name, arguments: args } });

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      duration: { type: "string", default: "10" },
      connections: { type: "string", default: "32" },
      seed: { type: "string", default: "1000" },
    },
  });
  const durationS = positiveOption("duration", values.duration);
  const connections = positiveOption("connections", values.connections);
  const seed = positiveOption("seed", values.seed);
  stopAfter(600);
  const run = runInfoOf({ databaseUrl: undefined, durationS, connections });

  console.error("starting the server (pglite, indexer and contradiction detection off)…");
  // Embedding every created memory (indexer, contradiction candidates) would share the two cores with
  // the API path, which is what differs between REST and MCP.
  const server = await startServer(undefined, { INDEXER_ENABLED: "false", CONTRADICTIONS_ENABLED: "false" });
  onCleanUp(server.stop);
  const key = await server.createKey("bench", "agent-1");

  const ids: string[] = [];
  const seeding = new Recorder();
  await closedLoop({ concurrency: 4, calls: Math.ceil(seed / 100) }, seeding, async (i) => {
    const batch = Array.from({ length: Math.min(100, seed - i * 100) }, (_, k) => memoryInput(i * 100 + k));
    const res = await postJson(server.url + memoriesPath, key, JSON.stringify({ memories: batch }));
    if (res.status !== 200) throw new CallFailure(`HTTP ${res.status}`);
    ids.push(...(res.body as { ids: string[] }).ids);
  });
  if (seeding.errors > 0) throw new Error(`seeding failed: ${JSON.stringify(seeding.errorKinds)}`);
  let stored = ids.length;

  const phase = async (name: string, transport: PhaseInfo["transport"], request: RestLoad["request"]): Promise<PhaseResult> => {
    const sample = request(0);
    const res = await fetch(server.url + sample.path, { method: sample.method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...mcpAccept }, body: sample.body as string | undefined });
    const text = await res.text();
    if (res.status !== 200 || text.includes('"isError":true')) throw new Error(`${name} (${transport}) fails: ${res.status} ${text.slice(0, 300)}`);
    const rec = new Recorder();
    const info: PhaseInfo = { phase: name, transport, dataSize: stored, concurrency: connections };
    const elapsedS = await restLoad({ url: server.url, key, connections, durationS, request }, rec);
    return rec.result(info, elapsedS);
  };

  const results: PhaseResult[] = [];
  results.push(await phase("get", "rest", (i) => ({ method: "GET", path: `${memoriesPath}/${ids[i % ids.length]}` })));
  results.push(
    await phase("get", "mcp", (i) => ({ method: "POST", path: "/mcp", headers: mcpAccept, body: toolCall(i, "memory_get", { id: ids[i % ids.length] }) })),
  );
  const restCreate = await phase("create", "rest", (i) => ({ method: "POST", path: memoriesPath, body: JSON.stringify(memoryInput(seed + i)) }));
  stored += restCreate.ok;
  results.push(restCreate);
  results.push(
    await phase("create", "mcp", (i) => ({ method: "POST", path: "/mcp", headers: mcpAccept, body: toolCall(i, "memory_create", memoryInput(2 * seed + 10_000_000 + i)) })),
  );

  console.log(formatTable(run, results));
  const file = fileURLToPath(new URL("results/mcp.json", import.meta.url));
  await writeJson(file, run, results);
  console.log(`\nwritten to ${file}`);
  return results.some((r) => r.errors > 0.01 * (r.ok + r.errors)) ? 1 : 0;
}

runBench(main);
