// The rate limiter's own cost: throughput of a cheap read (GET one memory) over REST and gRPC with rate
// limits off, with the in-memory limiter and with the PostgreSQL limiter, against the real server in
// a child process. The plan's limits are far above the offered load, so every request is admitted and
// the difference is the admission path itself (authentication, bucket update, concurrency slot, headers).
//
//   npx tsx bench/rate-limits.ts [--duration 5] [--connections 32] [--database-url postgres://user@host/db]
//                                [--timeout 300]
//
// Without --database-url the server uses PGlite, and the postgres limiter keeps its buckets in PGlite.
// Results are printed and written to bench/results/rate-limits-<backend>.json.

import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { closedLoop } from "./lib/closed-loop.js";
import { memoryInput } from "./lib/content.js";
import { memoryGrpcClient } from "./lib/grpc.js";
import { postJson } from "./lib/http-json.js";
import { formatTable, runInfoOf, writeJson } from "./lib/report.js";
import { restLoad } from "./lib/rest-load.js";
import { onCleanUp, positiveOption, runBench, stopAfter } from "./lib/run.js";
import { scratchDatabase } from "./lib/scratch-database.js";
import { startServer } from "./lib/server.js";
import { Recorder, type PhaseResult } from "./lib/stats.js";

const stores = ["off", "memory", "postgres"] as const;
const warmupS = 2;
const memoriesPath = "/api/v1/agent/memories";

// Admits everything the bench can offer, so no request is refused and quotas never apply.
const benchPlans = {
  bench: {
    memoriesStored: null,
    recallsPerMonth: null,
    costUnitsPerMonth: null,
    rate: { sustainedPerSecond: 1_000_000, burstPerSecond: 1_000_000, burstSeconds: 0, concurrency: 10_000 },
  },
};

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: "string", default: "5" },
      connections: { type: "string", default: "32" },
      "database-url": { type: "string" },
      timeout: { type: "string", default: "300" },
    },
  });
  return {
    durationS: positiveOption("duration", values.duration),
    connections: positiveOption("connections", values.connections),
    databaseUrl: values["database-url"] ?? (process.env.BENCH_DATABASE_URL || undefined),
    timeoutS: positiveOption("timeout", values.timeout),
  };
}

type Options = ReturnType<typeof parseOptions>;

/** Starts a server with one limiter store, seeds one memory, and times gets over REST and gRPC. */
async function measure(options: Options, store: (typeof stores)[number]): Promise<PhaseResult[]> {
  const database = options.databaseUrl ? await scratchDatabase(options.databaseUrl) : undefined;
  if (database) onCleanUp(database.drop);
  const server = await startServer(database?.url, {
    RATE_LIMIT_STORE: store,
    PLANS: JSON.stringify(benchPlans),
    DEFAULT_PLAN: "bench",
    INDEXER_ENABLED: "false",
  });
  onCleanUp(server.stop); // on interruption; stopping twice is harmless
  const key = await server.createKey("bench", "agent-1");
  const grpc = memoryGrpcClient(server.url, key);
  try {
    const created = await postJson(server.url + memoriesPath, key, JSON.stringify(memoryInput(0)));
    const id = (created.body as { ids: string[] }).ids[0]!;
    const info = (transport: "rest" | "grpc") => ({
      phase: `get, limits ${store}`,
      transport,
      dataSize: 1,
      concurrency: options.connections,
    });
    const rest = (rec: Recorder, durationS: number) =>
      restLoad(
        { url: server.url, key, connections: options.connections, durationS, request: () => ({ method: "GET", path: `${memoriesPath}/${id}` }) },
        rec,
      );
    const viaGrpc = (rec: Recorder, durationS: number) =>
      closedLoop({ concurrency: options.connections, durationS }, rec, async () => void (await grpc.getMemory({ id })));

    await Promise.all([rest(new Recorder(), warmupS), viaGrpc(new Recorder(), warmupS)]);
    const results: PhaseResult[] = [];
    for (const [transport, drive] of [["rest", rest], ["grpc", viaGrpc]] as const) {
      const rec = new Recorder();
      const elapsedS = await drive(rec, options.durationS);
      const r = rec.result(info(transport), elapsedS);
      console.error(`  limits ${store}, ${transport}: ${r.reqPerS.toFixed(0)} req/s, p99 ${r.p99Ms.toFixed(1)} ms, ${r.errors} errors`);
      results.push(r);
    }
    return results;
  } finally {
    grpc.close();
    await server.stop();
    await database?.drop();
  }
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  stopAfter(options.timeoutS);
  const run = runInfoOf(options);
  const { backend } = run;
  const results: PhaseResult[] = [];
  for (const store of stores) {
    console.error(`starting the server (${backend}, RATE_LIMIT_STORE=${store})…`);
    results.push(...(await measure(options, store)));
  }

  console.log(formatTable(run, results));
  const baseline = (transport: string) => results.find((r) => r.phase === "get, limits off" && r.transport === transport)!;
  console.log("\nthroughput relative to limits off:");
  for (const r of results.filter((r) => r.phase !== "get, limits off")) {
    console.log(`  ${r.phase} (${r.transport}): ${((r.reqPerS / baseline(r.transport).reqPerS - 1) * 100).toFixed(1)}%`);
  }
  const file = fileURLToPath(new URL(`results/rate-limits-${backend}.json`, import.meta.url));
  await writeJson(file, run, results);
  console.log(`\nwritten to ${file}`);
  return results.some((r) => r.errors > 0) ? 1 : 0;
}

runBench(main);
