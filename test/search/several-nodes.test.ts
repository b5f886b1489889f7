import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as pause } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type App } from "../../src/app.js";
import { ConfigError, loadConfig } from "../../src/config.js";
import { hashEmbeddingServer, type HashEmbeddingServer } from "../support/hash-embeddings.js";
import { adminKey, freshPostgresDatabase, rest } from "../support/test-server.js";
import { indexedIds } from "../support/indexed-ids.js";

// Several nodes on one PostgreSQL database and one LanceDB directory. Nodes embed through a local
// bag-of-words endpoint (test/support/hash-embeddings.ts) instead of loading a model, so one starts in
// tens of milliseconds: the storage steps that race at start-up (migrations, the location record, the
// LanceDB tables and their full-text indexes, the maintainer lease) meet at full speed, ten rounds in a row.

let embeddings: HashEmbeddingServer;
/** A node in a process of its own, to be killed; it starts with the file, and loads while the rounds run. */
let killable: KillableNode;
beforeAll(async () => {
  embeddings = await hashEmbeddingServer();
  killable = await startKillableNode(await freshSite(), { INDEX_MAINTAINER_LEASE_MS: String(killableLeaseMs) });
});
afterAll(async () => {
  await killable?.stop();
  await embeddings?.close();
});

const nodeEnv = (databaseUrl: string, env: Record<string, string>) => ({
  PORT: "0",
  HOST: "127.0.0.1",
  LOG_LEVEL: "warn",
  AGENTMEM_ADMIN_KEY: adminKey,
  DATABASE_URL: databaseUrl,
  DATA_DIR: "memory://",
  ...embeddings.env,
  ...env,
});

/** One PostgreSQL database and one LanceDB directory, shared by the nodes started on them. */
async function freshSite() {
  const database = await freshPostgresDatabase();
  const lanceDir = await mkdtemp(path.join(os.tmpdir(), "agentmem-nodes-"));
  return {
    database,
    env: (env: Record<string, string> = {}) => nodeEnv(database.url, { LANCEDB_URI: lanceDir, ...env }),
    config: (env: Record<string, string> = {}) => loadConfig(nodeEnv(database.url, { LANCEDB_URI: lanceDir, ...env })),
    async drop() {
      await database.drop();
      await rm(lanceDir, { recursive: true, force: true });
    },
  };
}
type Site = Awaited<ReturnType<typeof freshSite>>;

/** Indexes every queued job: a job is done once its memory is written to the index. */
async function indexAll(nodes: App[]): Promise<void> {
  const queued = async () => (await nodes[0]!.db.query<{ n: number }>("select count(*)::int as n from index_outbox where indexed_at is null"))[0]!.n;
  while ((await queued()) > 0) await Promise.all(nodes.map((n) => n.indexer.drain()));
}

async function maintainers(nodes: App[]): Promise<number> {
  const held = await Promise.all(nodes.map((n) => n.maintainer!.tryAcquire()));
  return held.filter(Boolean).length;
}

async function agentKey(node: App): Promise<string> {
  return (await rest(node.url, adminKey)("POST", "/api/v1/admin/keys", { workspace: "acme", container: "agent-1" })).body.key;
}

async function recallFirst(node: App, key: string, query: string): Promise<string | undefined> {
  const found = await rest(node.url, key)("POST", "/api/v1/agent/recall", { query, searchMode: "semantic", limit: 1 });
  expect(found.status, JSON.stringify(found.body)).toBe(200);
  return found.body.memories[0]?.id;
}

/**
 * Polls `probe` until it holds and returns how long after `since` that was; every probe that starts more
 * than `boundMs` after `since` must see it, however long the probe itself takes.
 */
async function seenWithin(boundMs: number, since: number, probe: () => Promise<boolean>): Promise<number> {
  for (;;) {
    const started = performance.now();
    if (await probe()) return started - since;
    expect(started - since, `not seen by a read that started ${Math.round(started - since)} ms after the write`).toBeLessThanOrEqual(boundMs);
    await pause(20);
  }
}

// Ten rounds of three nodes started at once on a new database and directory. The first also writes on
// every node and recalls on every node; the others start, search both collections and elect, which
// keeps a round to the start of three nodes.
const rounds = Array.from({ length: 10 }, (_, i) => ({ round: i + 1, writes: i === 0 }));

describe.each(rounds)("three nodes started at the same moment, round $round", ({ writes }) => {
  let site: Site;
  let nodes: App[] = [];

  beforeAll(async () => {
    site = await freshSite();
    const config = site.config();
    const started = await Promise.allSettled([startApp(config), startApp(config), startApp(config)]);
    nodes = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    expect(started.flatMap((s) => (s.status === "rejected" ? [String(s.reason)] : []))).toEqual([]);
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
    await site?.drop();
  });

  if (writes) it("recall on every node what was written on any of them", async () => {
    const key = await agentKey(nodes[0]!);
    const facts = [
      "The staging database is restored from backup every Sunday night",
      "Deploys to production need two approvals from the platform team",
      "The office wifi password rotates on the first Monday of each month",
    ];
    const ids: string[] = [];
    for (const [i, content] of facts.entries()) {
      const created = await rest(nodes[i]!.url, key)("POST", "/api/v1/agent/memories", { content, type: "fact" });
      expect(created.status).toBe(200);
      ids.push(created.body.ids[0]);
    }
    await indexAll(nodes);
    for (const node of nodes) {
      for (const [i, content] of facts.entries()) expect(await recallFirst(node, key, content)).toBe(ids[i]);
    }
  });

  it("all search memories and skills, one maintains, and another once it stops", async () => {
    const key = await agentKey(nodes[0]!);
    for (const node of nodes) {
      // Hybrid: by meaning and by words, so every node's vectors and full-text indexes answer.
      const memories = await rest(node.url, key)("POST", "/api/v1/agent/recall", { query: "staging database backup" });
      expect(memories.status, JSON.stringify(memories.body)).toBe(200);
      const skills = await rest(node.url, key)("POST", "/api/v1/agent/skills/search", { query: "rotate credentials" });
      expect(skills.status, JSON.stringify(skills.body)).toBe(200);
    }
    expect(await maintainers(nodes)).toBe(1);
    const holder = nodes.find((n) => n.maintainer!.holds())!;
    await holder.close();
    nodes = nodes.filter((n) => n !== holder);
    expect(await maintainers(nodes)).toBe(1);
  });
});

describe("API-only nodes beside an indexing node", () => {
  // The API-only nodes (INDEXER_ENABLED=false) never touch the outbox or write the index: what they
  // recall was either read from Postgres (a job not yet done) or from the index another node wrote.
  const boundMs = 2000;
  let site: Site;
  let readers: App[] = [];
  let indexing: App | undefined;
  let key: string;
  const fact = "The nightly build publishes its artifacts to the blue bucket";
  let id: string;
  /** When the indexing node had written the memory to the index. */
  let indexedAt: number;
  /** Outbox jobs: not done, done, and done of the write (besides, reconciliation may queue the memory again at the indexing node's start). */
  const jobs = async () =>
    (
      await readers[0]!.db.query<{ queued: number; done: number; written: number }>(
        `select count(*) filter (where indexed_at is null)::int as queued, count(indexed_at)::int as done,
           count(indexed_at) filter (where version is not null and memory_id = $1)::int as written from index_outbox`,
        [id],
      )
    )[0]!;

  beforeAll(async () => {
    site = await freshSite();
    const config = site.config({ INDEXER_ENABLED: "false", LANCEDB_READ_CONSISTENCY_MS: String(boundMs) });
    readers = await Promise.all([startApp(config), startApp(config)]);
    key = await agentKey(readers[0]!);
  });
  afterAll(async () => {
    await Promise.all([...readers, ...(indexing ? [indexing] : [])].map((n) => n.close()));
    await site?.drop();
  });

  it("recall a write made on another node at once, before any node has indexed it", async () => {
    const created = await rest(readers[0]!.url, key)("POST", "/api/v1/agent/memories", { content: fact, type: "fact" });
    expect(created.status).toBe(200);
    id = created.body.ids[0];
    expect(await recallFirst(readers[1]!, key, fact)).toBe(id);
    expect(await indexedIds(readers[1]!.vectors)).not.toContain(id);
  });

  it("still recall it at once after another node indexed it, while their own view of the index lags", async () => {
    // A read now: the readers' index handles look for newer versions again only boundMs from here.
    for (const reader of readers) expect(await recallFirst(reader, key, fact)).toBe(id);
    indexing = await startApp(site.config({ LANCEDB_READ_CONSISTENCY_MS: String(boundMs) }));
    // The start's reconciliation runs beside the first drain: it may queue the memory again, and that job
    // must be done before indexedAt too, or the last test's drain finds it younger than boundMs.
    await indexing.indexer.started();
    await indexing.indexer.drain();
    indexedAt = performance.now();
    expect(await indexedIds(indexing.vectors)).toContain(id);
    // Done, and kept for boundMs.
    expect(await jobs()).toMatchObject({ queued: 0, written: 1 });
    for (const reader of readers) expect(await recallFirst(reader, key, fact)).toBe(id);
  });

  it("see what another node wrote to the index within LANCEDB_READ_CONSISTENCY_MS: memories and skills", async () => {
    // Recall finds the memory through its job meanwhile (above), so the readers' index handles are asked.
    const [vector] = await indexing!.model.embed([fact]);
    const workspaceId = (await indexing!.db.query<{ workspace_id: string }>("select workspace_id from memories where id = $1", [id]))[0]!.workspace_id;
    for (const reader of readers) {
      await seenWithin(boundMs, indexedAt, async () => (await reader.vectors.search(vector!, { workspaceId }, 1))[0]?.id === id);
    }

    const skill = await rest(indexing!.url, key)("POST", "/api/v1/agent/skills", {
      name: "rotate-credentials",
      description: "Rotates the database credentials of a service without downtime.",
      content: "# Rotate credentials\n",
    });
    expect(skill.status, JSON.stringify(skill.body)).toBe(200);
    // The writing node indexes a skill before its write answers.
    const skillWritten = performance.now();
    for (const reader of readers) {
      await seenWithin(boundMs, skillWritten, async () => {
        const found = await rest(reader.url, key)("POST", "/api/v1/agent/skills/search", { query: "rotate database credentials", searchMode: "semantic" });
        return found.body.skills?.[0]?.id === skill.body.skill.id;
      });
    }
  });

  it("keep a done job only until every node's view of the index has caught up", async () => {
    // Done jobs were marked before indexedAt; a drain that starts boundMs after that deletes them.
    await pause(Math.max(0, indexedAt + boundMs + 10 - performance.now()));
    await indexing!.indexer.drain();
    expect(await jobs()).toEqual({ queued: 0, done: 0, written: 0 });
  });
});

// Renewed every second: the killable node keeps the role unless starved of CPU for two seconds.
const killableLeaseMs = 3000;

interface KillableNode {
  site: Site;
  env: Record<string, string>;
  child: ChildProcess;
  /** Resolves once the node holds the maintainer lease; rejects if it exits first. */
  holds: Promise<void>;
  stop(): Promise<void>;
}

/** Starts `node src/main.ts` alone on its site, so it takes the maintainer role. */
async function startKillableNode(site: Site, env: Record<string, string>): Promise<KillableNode> {
  let stderr = "";
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { env: { ...process.env, ...site.env(env) }, stdio: ["ignore", "ignore", "pipe"] });
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<never>((_, reject) => child.once("exit", (code) => reject(new Error(`the node exited (${code}): ${stderr}`))));
  exited.catch(() => undefined);
  const prefix = `${os.hostname()}/${child.pid}/`;
  const polled = (async () => {
    const { openDatabase } = await import("../../src/db/database.js");
    const db = await openDatabase({ databaseUrl: site.database.url, dataDir: "memory://", poolSize: 1, vector: false });
    try {
      while (child.exitCode === null) {
        const rows = await db.query<{ holder: string }>("select holder from index_maintainer").catch(() => []);
        if (rows[0]?.holder.startsWith(prefix)) return;
        await pause(50);
      }
    } finally {
      await db.close();
    }
  })();
  const holds = Promise.race([polled, exited]);
  holds.catch(() => undefined);
  return {
    site,
    env,
    child,
    holds,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exit = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        await exit;
      }
      await polled.catch(() => undefined);
      await site.drop();
    },
  };
}

describe("the index maintainer killed (SIGKILL)", () => {
  let nodes: App[] = [];
  /** The lease row, its expiry in epoch milliseconds on the database clock. */
  const lease = async () =>
    (await nodes[0]!.db.query<{ holder: string; expires: number }>("select holder, extract(epoch from expires_at)::float8 * 1000 as expires from index_maintainer"))[0]!;

  beforeAll(async () => {
    await killable.holds;
    const config = killable.site.config(killable.env);
    nodes = await Promise.all([startApp(config), startApp(config)]);
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  it("loses the role to another node once its lease has run out, at the next attempt", async () => {
    const { child } = killable;
    const childId = new RegExp(`^${os.hostname()}/${child.pid}/`);
    expect((await lease()).holder).toMatch(childId);
    expect(nodes.filter((n) => n.maintainer!.holds())).toHaveLength(0);
    const exit = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exit;
    const killed = performance.now();
    // The dead holder's last renewal: nothing renews it any more.
    const dead = await lease();
    expect(dead.holder).toMatch(childId);
    while (!nodes.some((n) => n.maintainer!.holds())) await pause(20);
    const taken = await lease();
    expect(nodes.filter((n) => n.maintainer!.holds())).toHaveLength(1);
    expect(nodes.map((n) => n.maintainer!.nodeId)).toContain(taken.holder);
    // On the database clock: never before the dead holder's lease ran out (at most a lease after the kill),
    // and at a node's first attempt after that (every third of the lease), or its second if the first was late.
    const acquired = taken.expires - killableLeaseMs;
    expect(acquired).toBeGreaterThanOrEqual(dead.expires);
    expect(acquired - dead.expires).toBeLessThanOrEqual((2 * killableLeaseMs) / 3);
    console.log(`maintainer role taken over ${Math.round(performance.now() - killed)} ms after the SIGKILL (lease ${killableLeaseMs} ms)`);
  });
});

describe("a node whose LanceDB location differs from the database's", () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let dirs: string[];
  let first: App;
  const config = (env: Record<string, string>) => loadConfig(nodeEnv(database.url, env));

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    dirs = [await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-a-")), await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-b-"))];
    first = await startApp(config({ LANCEDB_URI: dirs[0]! }));
  });
  afterAll(async () => {
    await first?.close();
    await database?.drop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("is refused at start with a message naming both locations", async () => {
    const refused = startApp(config({ LANCEDB_URI: dirs[1]! }));
    await expect(refused).rejects.toBeInstanceOf(ConfigError);
    const message = (await refused.catch((err: Error) => err.message)) as string;
    expect(message).toContain(dirs[0]);
    expect(message).toContain(dirs[1]);
    expect(message).toContain(`LANCEDB_URI=${dirs[0]}`);
    expect(message).not.toContain("\n");
  });

  it("is refused when its index would be a temporary directory of its own", async () => {
    await expect(startApp(config({}))).rejects.toThrow(/temporary directory.*LANCEDB_URI=/);
  });

  it("accepts the same directory written differently, and an API-only node never maintains", async () => {
    const relative = path.relative(process.cwd(), dirs[0]!);
    const apiOnly = await startApp(config({ LANCEDB_URI: relative, INDEXER_ENABLED: "false" }));
    try {
      expect(apiOnly.maintainer).toBeNull();
      expect(await first.maintainer!.tryAcquire()).toBe(true);
    } finally {
      await apiOnly.close();
    }
  });
});
