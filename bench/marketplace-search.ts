// Marketplace search latency at scale. The real server runs in a child process with embedded storage
// (PGlite + LanceDB, the defaults) and MARKETPLACE_ENABLED=true.
//
//   npx tsx bench/marketplace-search.ts [--size 10000] [--workspaces 20] [--queries 300] [--timeout 3600]
//
// `--size` synthetic skills are created and published through the API by `--workspaces` authors (8
// requests in flight; each create is followed by its publish-public), so every one is a public skill of
// another workspace than the searcher's. Then, at concurrency 1 from a workspace of its own:
//   - `--queries` searches with a query text never sent before (the server embeds every query), hybrid;
//   - the same number of browse calls (sort popular, then new), which embed nothing.
// p50/p95/p99 of the whole REST call, and the server's own embed and search times for queries.
// Writes bench/results/marketplace-search.json.

import { mkdir, writeFile } from "node:fs/promises";
import { availableParallelism, cpus, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { agentClient, freshQuery, percentile, syntheticSkill, type Call } from "./lib/skills.js";
import { prng } from "./lib/synthetic.js";
import { onCleanUp, positiveOption, runBench, stopAfter } from "./lib/run.js";
import { startServer } from "./lib/server.js";
import { alignedTable } from "./lib/table.js";


const summary = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), n: sorted.length };
};

async function load(authors: Call[], size: number): Promise<{ seconds: number; perSecond: number }> {
  const rand = prng(42);
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < size; i = next++) {
      const call = authors[i % authors.length]!;
      const { skill } = await call("skills", syntheticSkill(i, rand, "public"));
      await call("skills/publish-public", { id: skill.id });
      if ((i + 1) % 1000 === 0) console.error(`published ${i + 1}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { seconds, perSecond: size / seconds };
}

async function latency(call: Call, queries: number) {
  const rand = prng(7);
  const query: number[] = [];
  const embedMs: number[] = [];
  const searchMs: number[] = [];
  let empty = 0;
  for (let i = 0; i < queries; i++) {
    // A text never sent before: the server embeds every query.
    const text = freshQuery(rand, i);
    const t = performance.now();
    const res = await call("marketplace/search", { query: text, limit: 20 });
    query.push(performance.now() - t);
    embedMs.push(res._meta.embedMs);
    searchMs.push(res._meta.searchMs);
    if (res.skills.length === 0) empty++;
  }
  const browse: Record<string, number[]> = { popular: [], new: [] };
  for (const sort of ["popular", "new"] as const) {
    let pageToken: string | undefined;
    for (let i = 0; i < queries; i++) {
      const t = performance.now();
      // Walks the pages, starting over at the end: deep pages cost as much as the first (keyset paging).
      const res = await call("marketplace/search", { sort, limit: 20, ...(pageToken ? { pageToken } : {}) });
      browse[sort]!.push(performance.now() - t);
      pageToken = res.nextPageToken;
    }
  }
  return {
    query: summary(query),
    serverEmbedMs: summary(embedMs),
    serverSearchMs: summary(searchMs),
    emptyResults: empty,
    popular: summary(browse.popular!),
    new: summary(browse.new!),
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      size: { type: "string", default: "10000" },
      workspaces: { type: "string", default: "20" },
      queries: { type: "string", default: "300" },
      timeout: { type: "string", default: "3600" },
    },
  });
  const size = positiveOption("size", values.size);
  const workspaces = positiveOption("workspaces", values.workspaces);
  const queries = positiveOption("queries", values.queries);
  stopAfter(positiveOption("timeout", values.timeout));
  const machine = { cores: availableParallelism(), cpu: cpus()[0]?.model ?? "unknown", node: process.version, loadAvg1m: loadavg()[0]! };
  console.log(`machine: ${machine.cores} cores (${machine.cpu}), node ${machine.node}, load ${machine.loadAvg1m.toFixed(2)}`);

  const server = await startServer(undefined, { MARKETPLACE_ENABLED: "true" });
  onCleanUp(() => server.stop());
  const authors = await Promise.all(Array.from({ length: workspaces }, async (_, i) => agentClient(server.url, await server.createKey(`author-${i}`, "main"))));
  const searcher = agentClient(server.url, await server.createKey("searcher", "main"));

  const loaded = await load(authors, size);
  console.log(`created and published ${size} skills of ${workspaces} workspaces in ${loaded.seconds.toFixed(0)} s (${loaded.perSecond.toFixed(1)} skills/s)`);
  const lat = await latency(searcher, queries);
  const loadAfter = loadavg()[0]!;
  console.log(`\nmarketplace search at ${size} public skills, concurrency 1, REST (load average ${loadAfter.toFixed(2)} at the end):`);
  const row = (name: string, s: { p50: number; p95: number; p99: number; n: number }) => [name, s.p50.toFixed(1), s.p95.toFixed(1), s.p99.toFixed(1), String(s.n)];
  console.log(
    alignedTable([
      ["call", "p50 ms", "p95 ms", "p99 ms", "n"],
      row("query (hybrid, fresh text: embedding included)", lat.query),
      row("  of which: server embed", lat.serverEmbedMs),
      row("  of which: server search + re-check", lat.serverSearchMs),
      row("browse, sort popular (paged)", lat.popular),
      row("browse, sort new (paged)", lat.new),
    ]),
  );
  if (lat.emptyResults > 0) console.log(`${lat.emptyResults} queries found nothing`);
  await server.stop();

  const out = path.join(fileURLToPath(new URL("./results/", import.meta.url)), "marketplace-search.json");
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, JSON.stringify({ machine, loadAvgAtEnd: loadAfter, startedAt: new Date().toISOString(), size, workspaces, load: loaded, latency: lat }, null, 2));
  console.log(`\nwrote ${path.relative(process.cwd(), out)}`);
  return 0;
}

runBench(main);
