// Whether memories not indexed yet rank as they will once indexed (read-your-writes scoring, see
// src/recall/pending-candidates.ts).
//
//   npx tsx bench/pending-ranking.ts [--writes 1] [--rounds 4]
//
// Starts a server in this process (PGlite in memory, LanceDB) with its indexer off, so a write stays
// pending until the bench drains the queue itself (as test/recall/read-your-writes.ts does). Stores the
// 152 agent-facts memories (bench/lib/agent-facts.ts) and indexes them; then, each round, writes --writes
// new memories about the user that answer none of the questions ("The user mentioned that …" with a
// synthetic sentence) and asks every question in keyword and hybrid mode twice: while those memories are
// pending, and after they are indexed. A fair pending score puts them among the first results as often
// as the indexed score does. Writes bench/results/pending-ranking.json.

import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { ingestAgentFacts, loadAgentFacts, postJson } from "./lib/agent-facts.js";
import { onCleanUp, positiveOption, runBench } from "./lib/run.js";
import { settleIndex } from "./lib/settle-index.js";
import { syntheticMemory } from "./lib/synthetic.js";
import { alignedTable } from "./lib/table.js";

const modes = ["keyword", "hybrid"] as const;
type Mode = (typeof modes)[number];

interface Result {
  round: number;
  state: "pending" | "indexed";
  newMemories: number;
  mode: Mode;
  hit1: number;
  hit5: number;
  /** Questions with one of the new memories first, and among the first five. */
  newFirst: number;
  newInTop5: number;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { writes: { type: "string", default: "1" }, rounds: { type: "string", default: "4" } } });
  const writes = positiveOption("writes", values.writes);
  const rounds = positiveOption("rounds", values.rounds);
  const adminKey = `bench-admin-${randomBytes(16).toString("hex")}`;
  const app = await startApp(loadConfig({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: "memory://", LOG_LEVEL: "warn", AGENTMEM_ADMIN_KEY: adminKey, INDEXER_ENABLED: "false" }));
  onCleanUp(() => app.close());
  const { memories, questions } = await loadAgentFacts();
  const facts = await ingestAgentFacts(app.url, adminKey, memories);
  await settleIndex(app);

  const added = new Set<string>();
  const results: Result[] = [];
  const evaluate = async (round: number, state: Result["state"]) => {
    for (const mode of modes) {
      const r: Result = { round, state, newMemories: added.size, mode, hit1: 0, hit5: 0, newFirst: 0, newInTop5: 0 };
      for (const q of questions) {
        const body = await postJson(`${app.url}/api/v1/agent/recall`, facts.key, { query: q.query, searchMode: mode, limit: 10, includeReceipt: false });
        const ids = (body.memories as Array<{ id: string }>).map((m) => m.id);
        const at = ids.findIndex((id) => q.expect.includes(facts.keyOf.get(id) ?? ""));
        if (at === 0) r.hit1++;
        if (at >= 0 && at < 5) r.hit5++;
        if (ids.length > 0 && added.has(ids[0]!)) r.newFirst++;
        if (ids.slice(0, 5).some((id) => added.has(id))) r.newInTop5++;
      }
      r.hit1 /= questions.length;
      r.hit5 /= questions.length;
      results.push(r);
    }
  };

  for (let round = 0; round < rounds; round++) {
    for (let j = 0; j < writes; j++) {
      const content = `The user mentioned that ${syntheticMemory(round * writes + j).replace(/\.$/, "")}`;
      const res = await postJson(`${app.url}/api/v1/agent/memories`, facts.key, { content, type: "fact", containers: ["home"] });
      added.add(res.ids[0] as string);
    }
    await evaluate(round, "pending");
    await settleIndex(app);
    await evaluate(round, "indexed");
  }

  const f3 = (v: number) => v.toFixed(3).replace(/^0\./, ".");
  const table = [["round", "new memories so far", "state", "mode", "hit@1", "hit@5", "new memory first", "new memory in top 5"]];
  for (const r of results) table.push([String(r.round), String(r.newMemories), r.state, r.mode, f3(r.hit1), f3(r.hit5), String(r.newFirst), String(r.newInTop5)]);
  console.log(`agent-facts: ${memories.length} memories, ${questions.length} questions; new memories a round: ${writes}`);
  console.log(alignedTable(table, [2, 3]));
  const file = fileURLToPath(new URL("results/pending-ranking.json", import.meta.url));
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ writes, rounds, results }, null, 2) + "\n");
  console.log(`\nwritten to ${file}`);
  return 0;
}

runBench(main);
