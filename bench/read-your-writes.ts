// What read-your-writes costs recall while a bulk import runs.
//
//   npx tsx bench/read-your-writes.ts [--seed 3000] [--recalls 100] [--database-url postgres://… | --pglite]
//
// The server runs in this process (startApp), on a PostgreSQL server (--database-url, or a throwaway
// cluster) or on PGlite in memory (--pglite), with LanceDB, so the bench can stop its indexer and read its
// outbox. Contradiction detection is off, as for bulk imports. Three phases, each with --recalls recalls per
// mode over REST (one at a time, query texts never sent before):
//   quiet       everything indexed, no pending writes;
//   importing   an import posts batches of 100 (two in flight) while the indexer works through them;
//   at bound    the indexer stopped and 1,200 more memories written, so the pending read sees its bound
//               (the workspace's newest 1,000 content jobs) on every recall.
// In each phase the pending read alone (pendingReader: the SQL, and the vectors of jobs its reader has not
// read before) and the brute-force scoring (withPending) are also timed directly, with the number of pending jobs seen. Writes
// bench/results/read-your-writes.json.

import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startApp, type App } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { jobVectorReader } from "../src/memories/job-vectors.js";
import { pendingReader, withPending } from "../src/recall/pending-candidates.js";
import { onCleanUp, runBench, stopAfter } from "./lib/run.js";
import { benchDatabase } from "./lib/scratch-database.js";
import { syntheticMemory, syntheticQueries } from "./lib/synthetic.js";
import { alignedTable } from "./lib/table.js";

const resultsFile = path.join(path.dirname(fileURLToPath(import.meta.url)), "results", "read-your-writes.json");
const modes = ["semantic", "keyword", "hybrid"] as const;
const adminKey = "bench-admin-key-read-your-writes";

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seed: { type: "string", default: "3000" },
      recalls: { type: "string", default: "100" },
      "database-url": { type: "string" },
      pglite: { type: "boolean", default: false },
      timeout: { type: "string", default: "3600" },
    },
  });
  stopAfter(Number(values.timeout));
  const recalls = Number(values.recalls);
  const databaseUrl = values.pglite ? undefined : await benchDatabase(values["database-url"]);
  const app: App = await startApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn", AGENTMEM_ADMIN_KEY: adminKey, DATA_DIR: "memory://", CONTRADICTIONS_ENABLED: "false", RATE_LIMIT_STORE: "off", ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }),
  );
  onCleanUp(() => app.close());
  const keyRes = await fetch(`${app.url}/api/v1/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    body: JSON.stringify({ workspace: "bench", container: "bench-1" }),
  });
  const key = ((await keyRes.json()) as { key: string }).key;
  const workspaceId = (await app.db.query<{ id: string }>("select id from workspaces where name = 'bench'"))[0]!.id;
  const post = async (route: string, body: unknown) => {
    const res = await fetch(`${app.url}/api/v1/agent/${route}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${route}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  let written = 0;
  const writeBatch = () => {
    const start = written;
    written += 100;
    return post("memories", { memories: Array.from({ length: 100 }, (_, i) => ({ content: syntheticMemory(start + i), type: "fact" })) });
  };
  const outbox = async () => (await app.db.query<{ n: number }>("select count(*)::int as n from index_outbox"))[0]!.n;

  const seed = Number(values.seed);
  while (written < seed) await writeBatch();
  while ((await outbox()) > 0) await app.indexer.drain();
  console.error(`seeded ${written} memories, all indexed`);

  const queries = syntheticQueries(recalls * modes.length * 3 + 10);
  let nextQuery = 0;
  const readPending = pendingReader(app.db, jobVectorReader(app.db));
  const results: Array<Record<string, unknown>> = [];

  async function measure(phase: string): Promise<void> {
    for (const mode of modes) {
      const latencies: number[] = [];
      const pendingMs: number[] = [];
      const scoringMs: number[] = [];
      const pendingSeen: number[] = [];
      for (let i = 0; i < recalls; i++) {
        const query = queries[nextQuery++]!;
        const started = performance.now();
        await post("recall", { query, searchMode: mode, limit: 10 });
        latencies.push(performance.now() - started);
        const t0 = performance.now();
        const pending = await readPending({ workspaceId, container: "bench-1" }, { filter: { workspaceId, containers: ["bench-1"] }, metadata: null, keywordQuery: mode === "semantic" ? null : query, vectors: mode !== "keyword" });
        const t1 = performance.now();
        withPending({ semantic: [], keyword: [] }, pending, mode === "keyword" ? undefined : new Float32Array(app.model.info.dimensions).fill(0.04), 40);
        scoringMs.push(performance.now() - t1);
        pendingMs.push(t1 - t0);
        pendingSeen.push(pending.rows.length);
      }
      const row = {
        phase, mode, recalls,
        p50Ms: percentile(latencies, 50), p95Ms: percentile(latencies, 95),
        pendingReadP50Ms: percentile(pendingMs, 50), pendingReadP95Ms: percentile(pendingMs, 95),
        scoringP50Ms: percentile(scoringMs, 50),
        pendingJobsP50: percentile(pendingSeen, 50), pendingJobsMax: Math.max(...pendingSeen),
      };
      results.push(row);
      console.error(JSON.stringify(row));
    }
  }

  await measure("quiet");

  let importing = true;
  const importer = (async () => {
    const lanes = [0, 1].map(async () => {
      while (importing) await writeBatch();
    });
    await Promise.all(lanes);
  })();
  const before = written;
  const importStarted = performance.now();
  await measure("importing");
  importing = false;
  await importer;
  const importRate = (written - before) / ((performance.now() - importStarted) / 1000);
  while ((await outbox()) > 0) await app.indexer.drain();

  await app.indexer.stop();
  for (let i = 0; i < 12; i++) await writeBatch();
  await measure("at bound");

  const table = alignedTable(
    [
      ["phase", "mode", "recall p50 ms", "recall p95 ms", "pending read p50 ms", "p95 ms", "scoring p50 ms", "pending jobs p50", "max"],
      ...results.map((r) => [r.phase, r.mode, ...(["p50Ms", "p95Ms", "pendingReadP50Ms", "pendingReadP95Ms", "scoringP50Ms"] as const).map((k) => (r[k] as number).toFixed(1)), String(r.pendingJobsP50), String(r.pendingJobsMax)] as string[]),
    ],
    [0, 1],
  );
  console.log(table);
  console.log(`\nimport during the "importing" phase: ${importRate.toFixed(0)} memories/s (batches of 100, two in flight); ${written} memories at the end`);
  await mkdir(path.dirname(resultsFile), { recursive: true });
  await writeFile(resultsFile, JSON.stringify({ at: new Date().toISOString(), cpus: cpus().length, loadavg: loadavg(), seed, importRate, results }, null, 2));
  console.log(`written to ${path.relative(process.cwd(), resultsFile)}; load average at the end ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
  return 0;
}

runBench(main);
