// Memory listing with metadata filters at growing sizes, through the real server's REST API.
//
//   npx tsx bench/memory-listing.ts [--sizes 10000,100000,1000000] [--requests 200] [--database-url postgres://…]
//
// Storage is a PostgreSQL server: --database-url, or a throwaway cluster from the installed binaries.
// Rows are inserted directly with batched SQL (generate_series, 50,000 rows a statement), not through the
// API: 1M memories through the write path would embed each of them. They go to one workspace and one
// container, with metadata {"project": p0..p99, "customer": {"id": c0..c999, "tier": gold|silver|bronze}, "n": i}
// and one creation second apart. The server runs with INDEXER_ENABLED=false (listing reads Postgres only,
// and reconciling the vector index would embed the inserted rows).
// For each size, a closed loop of --requests GETs per query kind, each a first page of 50 with a filter
// value picked at random, then EXPLAIN ANALYZE of the statement the service runs, to show which index
// answers it. Writes bench/results/memory-listing.json.

import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { JsonObject } from "@bufbuild/protobuf";
import pg from "pg";
import type { Database, Sql } from "../src/db/database.js";
import { listMemories } from "../src/memories/memory-list.js";
import { parseMetadataFilter } from "../src/memories/metadata-filter.js";
import { onCleanUp, runBench, stopAfter } from "./lib/run.js";
import { benchDatabase } from "./lib/scratch-database.js";
import { startServer } from "./lib/server.js";
import { alignedTable } from "./lib/table.js";

const insertBatch = 50_000;
const pageSize = 50;
const resultsFile = path.join(path.dirname(fileURLToPath(import.meta.url)), "results", "memory-listing.json");

interface QueryKind {
  name: string;
  /** Share of memories the filter matches. */
  matches: string;
  metadata: (pick: number) => JsonObject | null;
  extra?: string;
}

const kinds: QueryKind[] = [
  { name: "no filter", matches: "100%", metadata: () => null },
  { name: "customer.id (nested key)", matches: "0.1%", metadata: (r) => ({ customer: { id: `c${r % 1000}` } }) },
  { name: "project", matches: "1%", metadata: (r) => ({ project: `p${r % 100}` }) },
  { name: "customer.tier", matches: "33%", metadata: (r) => ({ customer: { tier: ["gold", "silver", "bronze"][r % 3]! } }) },
  // Correlated: a project's memories all have one type (both follow the row number), so this matches 1% for a
  // quarter of the projects and nothing for the rest, where the planner expects 0.25% everywhere.
  { name: "project + type lesson", matches: "1% or 0", metadata: (r) => ({ project: `p${r % 100}` }), extra: "types=lesson" },
];

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function insertRows(db: pg.Client, workspaceId: string, from: number, to: number): Promise<number> {
  const started = performance.now();
  for (let start = from; start <= to; start += insertBatch) {
    const end = Math.min(to, start + insertBatch - 1);
    await db.query(
      `insert into memories (id, workspace_id, content, type, containers, tags, source, valid_from, metadata, confidence,
         version, key_id, created_at, updated_at, content_hash)
       select 'mem_bench' || lpad(g::text, 17, '0'), $1,
         'Synthetic memory ' || g || ' about project p' || (g % 100) || ' for customer c' || (g % 1000),
         (array['fact', 'lesson', 'preference', 'directive'])[1 + g % 4], '{bench-1}', array['t' || (g % 20)], 'direct',
         t, jsonb_build_object('project', 'p' || (g % 100), 'customer',
           jsonb_build_object('id', 'c' || (g % 1000), 'tier', (array['gold', 'silver', 'bronze'])[1 + g % 3]), 'n', g),
         1, 1, 'key_bench', t, t, md5(g::text)
       from generate_series($2::int, $3::int) as g, lateral (select timestamptz '2025-01-01' + g * interval '1 second' as t) as ts`,
      [workspaceId, start, end],
    );
  }
  await db.query("update workspace_usage set memories_stored = (select count(*) from memories) where workspace_id = $1", [workspaceId]);
  await db.query("analyze memories");
  return (performance.now() - started) / 1000;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      sizes: { type: "string", default: "10000,100000,1000000" },
      requests: { type: "string", default: "200" },
      "database-url": { type: "string" },
      timeout: { type: "string", default: "3600" },
    },
  });
  stopAfter(Number(values.timeout));
  const sizes = values.sizes.split(",").map(Number).sort((a, b) => a - b);
  const requests = Number(values.requests);
  const databaseUrl = await benchDatabase(values["database-url"]);
  const server = await startServer(databaseUrl, { INDEXER_ENABLED: "false" });
  onCleanUp(() => server.stop());
  const key = await server.createKey("bench", "bench-1");
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  onCleanUp(() => db.end());
  const workspaceId = (await db.query<{ id: string }>("select id from workspaces where name = 'bench'")).rows[0]!.id;

  const results: Array<Record<string, unknown>> = [];
  let stored = 0;
  for (const size of sizes) {
    const insertS = await insertRows(db, workspaceId, stored + 1, size);
    console.error(`inserted ${size - stored} rows in ${insertS.toFixed(1)} s (now ${size})`);
    stored = size;
    for (const kind of kinds) {
      const latencies: number[] = [];
      let returned = 0;
      for (let i = 0; i < requests; i++) {
        const metadata = kind.metadata(Math.floor(Math.random() * 1_000_000));
        const query = new URLSearchParams({ pageSize: String(pageSize) });
        if (metadata) query.set("metadata", JSON.stringify(metadata));
        const url = `${server.url}/api/v1/agent/memories?${query}${kind.extra ? `&${kind.extra}` : ""}`;
        const started = performance.now();
        const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
        const body = (await res.json()) as { memories: unknown[] };
        latencies.push(performance.now() - started);
        if (res.status !== 200) throw new Error(`${res.status}: ${JSON.stringify(body)}`);
        returned += body.memories.length;
      }
      latencies.sort((a, b) => a - b);
      // The plan of the page query the service runs, for one filter value, in the transaction it runs in.
      const metadata = kind.metadata(123);
      let plan = "";
      const explaining: Sql = {
        query: async <Row>(text: string, params?: readonly unknown[]) => {
          if (text.includes("order by m.created_at desc")) {
            plan = (await db.query(`explain (analyze, costs off, timing off, summary on) ${text}`, params as unknown[])).rows.map((r) => r["QUERY PLAN"]).join("\n");
          }
          return (await db.query(text, params as unknown[])).rows as Row[];
        },
      };
      const traced: Database = {
        ...explaining,
        kind: "postgres",
        async transaction(fn) {
          await db.query("begin");
          try {
            const result = await fn(explaining);
            await db.query("commit");
            return result;
          } catch (err) {
            await db.query("rollback");
            throw err;
          }
        },
        ping: async () => undefined,
        maintain: async () => undefined,
        close: async () => undefined,
      };
      await listMemories(traced, { workspaceId, container: "bench-1" }, {
        containers: [], types: kind.extra ? ["lesson"] : [], tags: [], state: null, createdAfter: null, createdBefore: null,
        metadata: metadata ? parseMetadataFilter(metadata, "metadata") : null, pageSize, after: null,
      });
      const indexes = [...new Set([...plan.matchAll(/(?:Bitmap Index Scan on|Index (?:Only )?Scan(?: Backward)? using) (\w+)/g)].map((m) => m[1]!))];
      results.push({
        size, query: kind.name, matches: kind.matches, requests, p50Ms: percentile(latencies, 50), p95Ms: percentile(latencies, 95),
        meanReturned: returned / requests, indexes, plan, insertS,
      });
      console.error(`${size} ${kind.name}: p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms via ${indexes.join(", ") || "seq scan"}`);
    }
  }
  const table = alignedTable(
    [
      ["memories", "filter", "matches", "p50 ms", "p95 ms", "index used"],
      ...results.map((r) => [String(r.size), String(r.query), String(r.matches), (r.p50Ms as number).toFixed(1), (r.p95Ms as number).toFixed(1), (r.indexes as string[]).join(", ")]),
    ],
    [1, 2, 5],
  );
  console.log(table);
  await mkdir(path.dirname(resultsFile), { recursive: true });
  await writeFile(resultsFile, JSON.stringify({ at: new Date().toISOString(), cpus: cpus().length, loadavg: loadavg(), pageSize, results }, null, 2));
  console.log(`\nwritten to ${path.relative(process.cwd(), resultsFile)}; load average at the end ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
  return 0;
}

runBench(main);
