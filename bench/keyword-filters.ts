// What a filter costs LanceDB's full-text search, by the share of rows it matches (see flatSearchPercent in
// src/search/vector/lance-session.ts).
//
//   npx tsx bench/keyword-filters.ts [--size 100000] [--dir /tmp/agentmem-keyword-filters] [--threshold 1]
//                                    [--searches 150] [--rounds 2]
//
// In this process, through the server's own index code (openLanceIndex): a table of --size memories of the
// scale benchmark (bench/lib/scale-data.ts: type 1/6, a tag 4%, metadata 0.5% / 2.5% / 25%, created over a
// year) with hashed vectors, built in --dir unless it is there already, so several thresholds can be run
// against one table. LanceDB reads LANCE_FLAT_SEARCH_PERCENT_THRESHOLD once per process, so each run
// measures the --threshold it is given. Per filter: --searches keyword searches for 40 (recall's pool for
// a limit of 10) with recall's workspace and container filter, a new query each, CPU and latency per
// search. Writes bench/results/keyword-filters.json.

import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parseMetadataFilter } from "../src/memories/metadata-filter.js";
import { filterTerms, metadataTerms } from "../src/memories/metadata-terms.js";
import { openLanceIndex } from "../src/search/vector/lancedb-index.js";
import type { VectorFilter } from "../src/search/vector/vector-index.js";
import { factRecord } from "./lib/fact-record.js";
import { hashVector } from "./lib/hashing-embedder.js";
import { onCleanUp, positiveOption, runBench } from "./lib/run.js";
import { scaleMemory } from "./lib/scale-data.js";
import { syntheticQueries } from "./lib/synthetic.js";
import { alignedTable } from "./lib/table.js";

const dimensions = 512;
const pool = 40;
const dayMs = 24 * 3600 * 1000;
// Fixed, so a table built by one run serves the next with the same creation times.
const now = Date.parse("2026-01-01T00:00:00Z");
const insertBatch = 10_000;

/** The index terms a recall's metadata filter asks for. */
const metadataFilterTerms = (filter: Record<string, string | number>) => filterTerms(parseMetadataFilter(filter, "metadata")!);

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      size: { type: "string", default: "100000" },
      dir: { type: "string", default: "/tmp/agentmem-keyword-filters" },
      threshold: { type: "string", default: "1" },
      searches: { type: "string", default: "150" },
      rounds: { type: "string", default: "2" },
    },
  });
  const size = positiveOption("size", values.size);
  const searches = positiveOption("searches", values.searches);
  const rounds = positiveOption("rounds", values.rounds);
  if (!/^\d+$/.test(values.threshold)) throw new Error(`--threshold must be a whole percent, got "${values.threshold}"`);
  // Before the index connects, which sets our default only when the variable is unset.
  process.env.LANCE_FLAT_SEARCH_PERCENT_THRESHOLD = values.threshold;
  const uri = path.join(values.dir, String(size));
  const built = existsSync(uri);
  await mkdir(uri, { recursive: true });
  const index = await openLanceIndex({ uri, dimensions });
  onCleanUp(() => index.close());
  if (!built) {
    console.error(`building ${size} memories in ${uri}…`);
    for (let start = 0; start < size; start += insertBatch) {
      const records = Array.from({ length: Math.min(insertBatch, size - start) }, (_, k) => {
        const m = scaleMemory(start + k, { id: `mem_${start + k}`, workspaceId: "ws", keyId: "key", container: "c1" }, now);
        return factRecord({ id: m.id, content: m.content, workspaceId: "ws", containers: ["c1"], type: m.type, tags: m.tags, createdAt: m.createdAt.getTime(), metadataTerms: metadataTerms(m.metadata), vector: hashVector(m.content, dimensions) });
      });
      await index.upsert(records);
    }
    // The second builds the indexes the first one's compacted table has grown into.
    await index.optimize();
    await index.optimize();
  }
  const base: VectorFilter = { workspaceId: "ws", containers: ["c1"] };
  const filters: Array<[string, VectorFilter]> = [
    ["none", base],
    ["type (1/6)", { ...base, types: ["lesson"] }],
    ["tag (4%)", { ...base, tags: ["tag-7"] }],
    ["metadata shard (0.5%)", { ...base, metadataTerms: metadataFilterTerms({ shard: 17 }) }],
    ["metadata project (2.5%)", { ...base, metadataTerms: metadataFilterTerms({ project: "project-3" }) }],
    ["metadata tier (25%)", { ...base, metadataTerms: metadataFilterTerms({ tier: 2 }) }],
    ["30-day window (8%)", { ...base, createdAfter: now - 30 * dayMs }],
  ];
  const queries = syntheticQueries(searches * filters.length * rounds);
  let next = 0;
  const rows = [["round", "filter", "CPU ms", "p50 ms", "p95 ms", "hits"]];
  const results = [];
  for (let round = 1; round <= rounds; round++) {
    for (const [name, filter] of filters) {
      const latencies: number[] = [];
      let hits = 0;
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < searches; i++) {
        const t0 = performance.now();
        hits += (await index.keywordSearch(queries[next++]!, filter, pool, false)).length;
        latencies.push(performance.now() - t0);
      }
      const cpu = process.cpuUsage(cpu0);
      latencies.sort((a, b) => a - b);
      const r = {
        round,
        filter: name,
        cpuMs: (cpu.user + cpu.system) / 1000 / searches,
        p50Ms: latencies[Math.floor(searches / 2)]!,
        p95Ms: latencies[Math.min(searches - 1, Math.ceil(searches * 0.95) - 1)]!,
        hitsPerSearch: hits / searches,
      };
      results.push(r);
      rows.push([String(round), name, r.cpuMs.toFixed(2), r.p50Ms.toFixed(2), r.p95Ms.toFixed(2), r.hitsPerSearch.toFixed(1)]);
    }
  }
  console.log(`LanceDB keyword search for ${pool} at ${size} memories, LANCE_FLAT_SEARCH_PERCENT_THRESHOLD=${values.threshold}, ${searches} searches per filter:`);
  console.log(alignedTable(rows, [1]));
  const file = fileURLToPath(new URL("results/keyword-filters.json", import.meta.url));
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ size, threshold: Number(values.threshold), searches, results }, null, 2) + "\n");
  console.log(`\nwritten to ${file}`);
  return 0;
}

runBench(main);
