import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createIndexer, defaultIndexerOptions, idleFoldDue } from "../../src/search/indexer.js";
import { openLanceSkillIndex } from "../../src/search/skills/lancedb-skill-index.js";
import { createSkillIndexer } from "../../src/search/skills/skill-indexer.js";
import type { VectorIndex } from "../../src/search/vector/vector-index.js";
import { killHard, spawnUnindexedServer } from "../support/child-server.js";
import { adminKey, rest, startTestServer, type TestServer } from "../support/test-server.js";
import { constantEmbedder } from "../support/constant-embedder.js";
import { indexedIds } from "../support/indexed-ids.js";
import { watchedDatabase } from "../support/watched-database.js";

const outboxSize = async (server: TestServer) =>
  (await server.app.db.query<{ n: number }>("select count(*)::int as n from index_outbox"))[0]!.n;

describe("indexing follows Postgres through the outbox", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("pglite");
  });
  afterAll(() => server?.close());

  it("keeps jobs queued while the vector index fails, and indexes them once it recovers", async () => {
    await server.app.indexer.stop();
    const agent = rest(server.url, await server.createKey("acme", "agent-1"));
    const created = await agent("POST", "/api/v1/agent/memories", {
      memories: [
        { content: "The failover runbook is in the ops wiki", type: "bookmark" },
        { content: "Never restart the primary during business hours", type: "directive" },
      ],
    });
    expect(await outboxSize(server)).toBe(2);

    let failing = true;
    const flaky: VectorIndex = {
      ...server.app.vectors,
      upsert: (records) => (failing ? Promise.reject(new Error("disk full")) : server.app.vectors.upsert(records)),
    };
    const indexer = createIndexer(server.app.db, flaky, constantEmbedder, pino({ level: "silent" }));
    await expect(indexer.drain()).rejects.toThrow("disk full");
    expect(await outboxSize(server)).toBe(2);
    for (const id of created.body.ids) expect(await indexedIds(server.app.vectors)).not.toContain(id);

    failing = false;
    expect(await indexer.drain()).toBe(2);
    expect(await outboxSize(server)).toBe(0);
    const indexed = await indexedIds(server.app.vectors);
    for (const id of created.body.ids) expect(indexed).toContain(id);
  });

  it("indexes a write with the vector its job carries, without embedding it again", async () => {
    const agent = rest(server.url, await server.createKey("acme", "agent-2"));
    const created = await agent("POST", "/api/v1/agent/memories", { content: "The staging cluster is rebuilt every Monday", type: "fact" });
    const edited = await agent("PATCH", `/api/v1/agent/memories/${created.body.ids[0]}`, { content: "The staging cluster is rebuilt every Tuesday" });
    expect(edited.status).toBe(200);
    const refusing = { ...constantEmbedder, embed: () => Promise.reject(new Error("the model must not be called")) };
    const indexer = createIndexer(server.app.db, server.app.vectors, refusing, pino({ level: "silent" }));
    expect(await indexer.drain()).toBe(2);
    const [query] = await server.app.model.embed(["The staging cluster is rebuilt every Tuesday"]);
    const [hit] = await server.app.vectors.search(query!, { workspaceId: (await server.app.db.query<{ workspace_id: string }>("select workspace_id from memories where id = $1", [created.body.ids[0]]))[0]!.workspace_id }, 1);
    expect(hit).toMatchObject({ id: created.body.ids[0] });
    expect(hit!.similarity).toBeCloseTo(1, 4);
  });
});

/**
 * Runs `test` on a server whose own indexer is stopped, so the indexer the test makes is the only one,
 * with contradictions off: each write is one job (no memory is shadowed and indexed again).
 */
async function withOwnIndexer(test: (server: TestServer, agent: ReturnType<typeof rest>) => Promise<void>): Promise<void> {
  const server = await startTestServer("pglite", { CONTRADICTIONS_ENABLED: "false" });
  try {
    await server.app.indexer.stop();
    await test(server, rest(server.url, await server.createKey("acme", "agent-1")));
  } finally {
    await server.close();
  }
}

/** The server's vector index, counting its folds. */
function countingFolds(server: TestServer) {
  const counted = {
    folds: 0,
    vectors: {
      ...server.app.vectors,
      optimize: () => {
        counted.folds++;
        return server.app.vectors.optimize();
      },
    } satisfies VectorIndex,
  };
  return counted;
}

describe("planner statistics", () => {
  it("are refreshed at the first fold, then at a fold once a tenth of the table has been written since", () =>
    withOwnIndexer(async (server, agent) => {
      const counted = countingFolds(server);
      const analysedAtFold: number[] = [];
      const db = watchedDatabase(server.app.db, (sql) => {
        if (sql === "analyze memories") analysedAtFold.push(counted.folds);
      });
      // A fold after every 10 writes, whatever the table's size.
      const indexer = createIndexer(db, counted.vectors, constantEmbedder, pino({ level: "silent" }), { ...defaultIndexerOptions, optimizeEvery: 10, optimizeEveryFraction: 0 });
      let written = 0;
      const write = async (n: number) => {
        for (let from = 0; from < n; from += 100) {
          const memories = Array.from({ length: Math.min(100, n - from) }, (_, i) => ({ content: `Build agent ${written + from + i} runs in rack ${(written + from + i) % 7}`, type: "fact" }));
          expect((await agent("POST", "/api/v1/agent/memories", { memories })).status).toBe(200);
        }
        written += n;
        expect(await indexer.drain()).toBe(n);
        await indexer.settled();
      };
      await write(200);
      await write(10);
      await write(10);
      await write(20);
      expect(counted.folds).toBe(4);
      // 200 rows analysed at the first fold; 10 writes are under a tenth of them, 20 are not; then 20 of 220.
      expect(analysedAtFold).toEqual([1, 3]);
    }));
});

describe("folds once the queue is empty", () => {
  it("wait 10 s after the last began, or four times its length when it took longer than 2.5 s", () => {
    const opts = defaultIndexerOptions;
    expect(idleFoldDue(9_999, 0, 100, opts)).toBe(false);
    expect(idleFoldDue(10_000, 0, 100, opts)).toBe(true);
    // A fold of 15 s (1M rows) is followed by the next idle one no sooner than 60 s after it began.
    expect(idleFoldDue(59_999, 0, 15_000, opts)).toBe(false);
    expect(idleFoldDue(60_000, 0, 15_000, opts)).toBe(true);
    expect(idleFoldDue(Date.now(), 0, 0, opts)).toBe(true);
  });

  it("are spaced by the last fold's length, while folds after optimizeEvery writes are not", () =>
    withOwnIndexer(async (server, agent) => {
      const counted = countingFolds(server);
      // No wait of its own, and a share so small that any fold's length defers the next idle one past the test.
      const indexer = createIndexer(server.app.db, counted.vectors, constantEmbedder, pino({ level: "silent" }), {
        ...defaultIndexerOptions,
        optimizeEvery: 20,
        optimizeEveryFraction: 0,
        idleOptimizeMs: 0,
        idleOptimizeShare: 1e-9,
      });
      let written = 0;
      const write = async (n: number) => {
        const memories = Array.from({ length: n }, (_, i) => ({ content: `Runner ${written + i} builds the ${i % 3 === 0 ? "web" : "api"} image`, type: "fact" }));
        written += n;
        expect((await agent("POST", "/api/v1/agent/memories", { memories })).status).toBe(200);
        expect(await indexer.drain()).toBe(n);
        await indexer.settled();
      };
      await write(1);
      expect(counted.folds).toBe(1); // the first idle fold: none has run yet
      await write(1);
      await write(1);
      expect(counted.folds).toBe(1);
      await write(20);
      expect(counted.folds).toBe(2); // 22 writes since the last fold
      expect(await indexer.drain()).toBe(0);
      expect(counted.folds).toBe(2);
    }));
});

describe("a trickle of writes", () => {
  it("lingers in the queue while it is short and young, then is written in one batch", () =>
    withOwnIndexer(async (server, agent) => {
      const silent = pino({ level: "silent" });
      const indexer = (lingerMs: number) =>
        createIndexer(server.app.db, server.app.vectors, constantEmbedder, silent, { ...defaultIndexerOptions, batchSize: 3, lingerMs });
      const patient = indexer(3_600_000);
      for (const content of ["The web image builds on runner 1", "The api image builds on runner 2"]) {
        expect((await agent("POST", "/api/v1/agent/memories", { content, type: "fact" })).status).toBe(200);
        expect(await patient.backgroundDrain()).toBe(0);
      }
      expect(await outboxSize(server)).toBe(2);
      // Queued, and recalled meanwhile through their jobs.
      const recalled = await agent("POST", "/api/v1/agent/recall", { query: "which runner builds the api image", searchMode: "keyword" });
      expect(recalled.body.memories[0].content).toBe("The api image builds on runner 2");
      // A batch's worth is written at once, however young.
      expect((await agent("POST", "/api/v1/agent/memories", { content: "The docs image builds on runner 3", type: "fact" })).status).toBe(200);
      expect(await patient.backgroundDrain()).toBe(3);
      expect(await outboxSize(server)).toBe(0);
      // A job older than lingerMs is written alone (its write, answered, took longer than 1 ms).
      expect((await agent("POST", "/api/v1/agent/memories", { content: "The cli image builds on runner 4", type: "fact" })).status).toBe(200);
      expect(await indexer(1).backgroundDrain()).toBe(1);
      expect((await indexedIds(server.app.vectors)).size).toBe(4);
    }));
});

describe("reconciliation", () => {
  it("is part of each indexer's start (memories, skills), and stop() waits for it: nothing touches storage after stop()", async () => {
    const server = await startTestServer("pglite");
    try {
      await server.app.indexer.stop();
      await server.app.skillIndexer.stop();
      let queries = 0;
      const db = watchedDatabase(server.app.db, () => queries++);
      const silent = pino({ level: "silent" });
      type EachIdPage = (size: number, fn: (ids: string[]) => Promise<void>) => Promise<void>;
      const indexers = [
        (eachIdPage: EachIdPage) => createIndexer(db, { ...server.app.vectors, eachIdPage }, constantEmbedder, silent),
        (eachIdPage: EachIdPage) => createSkillIndexer(db, { ...server.app.skillIndex, eachIdPage }, constantEmbedder, silent),
      ];
      for (const create of indexers) {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let reconciling = false;
        const indexer = create(async () => {
          reconciling = true;
          await held;
        });
        indexer.start();
        expect(reconciling).toBe(true);
        let stopped = false;
        const stopping = indexer.stop().then(() => (stopped = true));
        await new Promise((resolve) => setImmediate(resolve));
        expect(stopped).toBe(false);
        release();
        await stopping;
        const after = queries;
        await new Promise((resolve) => setImmediate(resolve));
        if ("notify" in indexer) indexer.notify();
        else await indexer.indexNow();
        await new Promise((resolve) => setImmediate(resolve));
        expect(queries).toBe(after);
      }
    } finally {
      await server.close();
    }
  });

  it("started() resolves once the start's reconciliation and the drain of what it queued have ended", async () => {
    const server = await startTestServer("pglite");
    try {
      const agent = rest(server.url, await server.createKey("acme", "agent-1"));
      const ids = (await agent("POST", "/api/v1/agent/memories", { memories: ["Lisbon", "Oslo"].map((city) => ({ content: `The team offsite is in ${city}`, type: "fact" })) })).body.ids as string[];
      await server.app.indexer.drain();
      await server.app.indexer.stop();
      await server.app.vectors.delete([ids[1]!]);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const indexer = createIndexer(
        server.app.db,
        { ...server.app.vectors, eachIdPage: async (size, fn) => (await held, server.app.vectors.eachIdPage(size, fn)) },
        constantEmbedder,
        pino({ level: "silent" }),
      );
      indexer.start();
      let started = false;
      const starting = indexer.started().then(() => (started = true));
      await indexer.drain();
      expect(started).toBe(false);
      release();
      await starting;
      expect(await indexedIds(server.app.vectors)).toEqual(new Set(ids));
      expect(await server.app.db.query("select memory_id from index_outbox where indexed_at is null")).toEqual([]);
      await indexer.stop();
    } finally {
      await server.close();
    }
  });

  it.each(["lancedb", "pgvector"])("queues what the %s indexes lack and removes what storage lacks, page by page", async (vectorBackend) => {
    const server = await startTestServer("pglite", { VECTOR_BACKEND: vectorBackend });
    try {
      const agent = rest(server.url, await server.createKey("acme", "agent-1"));
      const memories = (await agent("POST", "/api/v1/agent/memories", { memories: ["Lisbon", "Oslo", "Kyoto", "Lima", "Accra"].map((city) => ({ content: `The team offsite is in ${city}`, type: "fact" })) })).body.ids as string[];
      const skills: string[] = [];
      for (const name of ["release-notes", "invoice-reminders", "standup-summary"]) {
        skills.push((await agent("POST", "/api/v1/agent/skills", { name, description: `Writes the ${name.replace("-", " ")}.`, content: `# ${name}\n` })).body.skill.id);
      }
      await server.app.indexer.drain();
      await server.app.skillIndexer.drain();
      await server.app.indexer.stop();
      await server.app.skillIndexer.stop();
      const [workspaceId] = (await server.app.db.query<{ workspace_id: string }>("select workspace_id from memories limit 1")).map((r) => r.workspace_id);
      const vector = new Float32Array(512).fill(1 / Math.sqrt(512));
      const orphans = ["mem_orphan_1", "mem_orphan_2", "mem_orphan_3"];
      await server.app.vectors.delete([memories[1]!, memories[4]!]);
      await server.app.vectors.upsert(orphans.map((id) => ({ id, content: "gone", workspaceId: workspaceId!, containers: ["agent-1"], type: "fact", tags: [], severity: null, confidence: 1, state: "active", validFrom: 0, validUntil: null, createdAt: 0, metadataTerms: [], vector })));
      await server.app.skillIndex.delete([skills[0]!]);
      await server.app.skillIndex.upsert([{ id: "skl_orphan", workspaceId: workspaceId!, containers: ["*"], tags: [], maturity: "draft", state: "active", marketplace: false, text: "gone", vector }]);
      const silent = pino({ level: "silent" });
      // Pages of two: every page boundary on both sides is crossed.
      expect(await createIndexer(server.app.db, server.app.vectors, constantEmbedder, silent).reconcile(2)).toEqual({ queued: 2, removed: 3 });
      expect(await createSkillIndexer(server.app.db, server.app.skillIndex, constantEmbedder, silent).reconcile(2)).toEqual({ queued: 1, removed: 1 });
      expect(await indexedIds(server.app.vectors)).toEqual(new Set([memories[0], memories[2], memories[3]]));
      expect(await indexedIds(server.app.skillIndex)).toEqual(new Set(skills.slice(1)));
      const queued = await server.app.db.query<{ id: string }>("select memory_id as id from index_outbox where indexed_at is null");
      expect(queued.map((r) => r.id).sort()).toEqual([memories[1], memories[4]].sort());
      const queuedSkills = await server.app.db.query<{ id: string }>("select skill_id as id from skill_index_outbox");
      expect(queuedSkills.map((r) => r.id)).toContain(skills[0]);
    } finally {
      await server.close();
    }
  });

  it("never removes the vector of a memory written while it runs", async () => {
    const server = await startTestServer("pglite");
    try {
      await server.app.indexer.stop();
      const agent = rest(server.url, await server.createKey("acme", "agent-1"));
      let createdDuringReconcile = "";
      // The index is read while another writer creates and indexes a memory.
      const racing: VectorIndex = {
        ...server.app.vectors,
        async eachIdPage(size, fn) {
          const created = await agent("POST", "/api/v1/agent/memories", { content: "Written mid-reconcile", type: "fact" });
          createdDuringReconcile = created.body.ids[0];
          await server.app.indexer.drain();
          return server.app.vectors.eachIdPage(size, fn);
        },
      };
      const { removed } = await createIndexer(server.app.db, racing, constantEmbedder, pino({ level: "silent" })).reconcile();
      expect(removed).toBe(0);
      expect(await indexedIds(server.app.vectors)).toContain(createdDuringReconcile);
    } finally {
      await server.close();
    }
  });
});

describe("a node killed before indexing", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "agentmem-kill-"));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  // Two server starts, the first a process of its own: 11 s alone, past 30 s beside the rest of the suite.
  it("loses nothing: the next start indexes what was committed", async () => {
    const { url: base, child, key } = await spawnUnindexedServer(dataDir, adminKey);
    const created = await rest(base, key)("POST", "/api/v1/agent/memories", { content: "The espresso machine needs descaling monthly", type: "fact" });
    expect(created.status).toBe(200);
    await killHard(child);

    const server = await startTestServer("pglite", { DATA_DIR: dataDir });
    try {
      await server.app.indexer.drain();
      expect(await indexedIds(server.app.vectors)).toContain(created.body.ids[0]);
      const found = await rest(server.url, key)("POST", "/api/v1/agent/recall", { query: "coffee maker maintenance", searchMode: "semantic", limit: 1 });
      expect(found.body.memories[0].id).toBe(created.body.ids[0]);
    } finally {
      await server.close();
    }
  });
});

describe("embedding model changes", () => {
  it("refuse to start with a clear message until `agentmem reindex` re-embeds everything", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "agentmem-model-"));
    try {
      const first = await startTestServer("pglite", { DATA_DIR: dataDir });
      const agent = rest(first.url, await first.createKey("acme", "agent-1"));
      const created = await agent("POST", "/api/v1/agent/memories", { content: "Invoices are due on the 15th", type: "fact" });
      const skill = await agent("POST", "/api/v1/agent/skills", { name: "invoice-reminders", description: "Reminds customers of invoices that are due soon.", content: "# Invoice reminders\n" });
      await first.app.indexer.drain();
      await first.app.db.query("update vector_index_state set provider = 'openai', model = 'text-embedding-3-small', dimensions = 1536");
      await first.close();
      expect(skill.body).toMatchObject({ skill: { slug: "invoice-reminders" } });
      // As if the skills had no vectors for this model yet (another model's collection is another table).
      const skills = await openLanceSkillIndex({ uri: path.join(dataDir, "lance"), dimensions: 512 });
      await skills.delete([skill.body.skill.id]);
      await skills.close();

      const config = loadConfig({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "silent" });
      await expect(startApp(config)).rejects.toThrow(/openai\/text-embedding-3-small \(1536-d\).*use-lite.*agentmem reindex/s);

      const { stdout } = await promisify(execFile)(process.execPath, ["src/cli/agentmem.mjs", "reindex"], {
        env: { ...process.env, DATA_DIR: dataDir },
        timeout: 120_000,
      });
      expect(stdout).toContain("re-embedding with use-lite/universal-sentence-encoder-lite (512-d)");
      expect(stdout).toMatch(/done: 1 memory jobs and 1 skill jobs/);
      const reindexed = await openLanceSkillIndex({ uri: path.join(dataDir, "lance"), dimensions: 512 });
      expect([...(await indexedIds(reindexed))]).toEqual([skill.body.skill.id]);
      await reindexed.close();

      const again = await startTestServer("pglite", { DATA_DIR: dataDir });
      try {
        await again.app.indexer.drain();
        const found = await rest(again.url, await again.createKey("acme", "agent-1"))("POST", "/api/v1/agent/recall", {
          query: "when are invoices due",
          searchMode: "semantic",
        });
        expect(found.body.memories[0].id).toBe(created.body.ids[0]);
      } finally {
        await again.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
    // Three cold starts of an on-disk PGlite (two servers and the CLI) and a model load in a child process.
  });
});
