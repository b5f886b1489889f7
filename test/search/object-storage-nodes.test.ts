import type { ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as pause } from "node:timers/promises";
import { connect, type Table } from "@lancedb/lancedb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp } from "../../src/app.js";
import { ConfigError, loadConfig } from "../../src/config.js";
import { openDatabase, type Database } from "../../src/db/database.js";
import type { IndexerOptions } from "../../src/search/indexer.js";
import { spawnServer } from "../support/child-server.js";
import { hashEmbeddingServer, type HashEmbeddingServer } from "../support/hash-embeddings.js";
import { startS3Server, type S3Server } from "../support/s3-server.js";
import { adminKey, freshPostgresDatabase, rest, startsProcessesTimeoutMs } from "../support/test-server.js";

// Three nodes as on three machines: each its own process, DATA_DIR and temporary directory, sharing only
// a PostgreSQL database and a bucket on an S3-compatible server. The server keeps the last of two
// concurrent commits (no conditional puts), so a write the index lost would show as a memory Postgres
// holds and the index does not.

const leaseMs = 3000;
const lanceUri = (bucket: string) => `s3://${bucket}/agentmem`;
/** Small thresholds: every write is indexed at once, and folds (compactions) run among the writes. */
const indexer: Partial<IndexerOptions> = { pollMs: 200, lingerMs: 0, optimizeEvery: 5, idleOptimizeMs: 300 };
/** A generous bound for conditions that hold once background work has run. */
const deadlineMs = 60_000;

let embeddings: HashEmbeddingServer;
let s3: S3Server;
let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
let db: Database;
let root: string;
let key: string;

interface Node {
  name: string;
  url: string;
  child: ChildProcess;
}
let nodes: Node[] = [];

/** Starts a node with its own DATA_DIR and TMPDIR under `root/name` (kept across its restarts). */
async function startNode(name: string): Promise<Node> {
  const home = path.join(root, name);
  await mkdir(path.join(home, "tmp"), { recursive: true });
  const { url, child } = await spawnServer(
    {
      PORT: "0",
      HOST: "127.0.0.1",
      AGENTMEM_ADMIN_KEY: adminKey,
      DATABASE_URL: database.url,
      DATA_DIR: path.join(home, "data"),
      TMPDIR: path.join(home, "tmp"),
      LANCEDB_URI: lanceUri(s3.bucket),
      INDEX_MAINTAINER_LEASE_MS: String(leaseMs),
      CONTRADICTIONS_ENABLED: "false",
      ...embeddings.env,
      ...s3.env,
    },
    [process.execPath, "--import", "tsx", "test/support/node-process.ts", JSON.stringify(indexer)],
  );
  return { name, url, child };
}

/** Starts the nodes at once; if one fails, those that started are kept (for afterAll to stop) and the failure is thrown. */
async function startNodes(names: string[]): Promise<Node[]> {
  const started = await Promise.allSettled(names.map(startNode));
  const running = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failed = started.find((s) => s.status === "rejected");
  if (failed) {
    nodes.push(...running);
    throw failed.reason;
  }
  return running;
}

async function stopNode(node: Node, signal: NodeJS.Signals): Promise<void> {
  if (node.child.exitCode !== null || node.child.signalCode !== null) return;
  const exit = new Promise((resolve) => node.child.once("exit", resolve));
  node.child.kill(signal);
  await exit;
}

/** Polls `condition` until it holds; fails after deadlineMs. */
async function until(what: string, condition: () => Promise<boolean>): Promise<void> {
  const started = performance.now();
  while (!(await condition())) {
    if (performance.now() - started > deadlineMs) throw new Error(`not within ${deadlineMs} ms: ${what}`);
    await pause(50);
  }
}

/**
 * Opens the memories' LanceDB table from the test itself, by name: s3rver answers no listing by
 * delimiter, so LanceDB's tableNames() finds nothing there.
 */
async function withMemoriesTable<T>(use: (table: Table) => Promise<T>): Promise<T> {
  const connection = await connect(lanceUri(s3.bucket), { storageOptions: s3.storageOptions, readConsistencyInterval: 0 });
  try {
    return await use(await connection.openTable(`memories_v2_${embeddings.env.EMBEDDING_DIMENSIONS}`));
  } finally {
    connection.close();
  }
}

/** Every id the index holds, read from the bucket. */
const indexedIds = () =>
  withMemoriesTable(async (table) => new Set((await table.query().select(["id"]).toArray()).map((r) => String(r.id))));

const storedIds = async () => new Set((await db.query<{ id: string }>("select id from memories")).map((r) => r.id));
const queuedJobs = async () => (await db.query<{ n: number }>("select count(*)::int as n from index_outbox where indexed_at is null"))[0]!.n;

/** Waits until the outbox is done, then returns the acknowledged memories the index lacks. */
async function missingFromIndex(): Promise<string[]> {
  await until("every queued job indexed", async () => (await queuedJobs()) === 0);
  const indexed = await indexedIds();
  return [...(await storedIds())].filter((id) => !indexed.has(id));
}

const lease = async () =>
  (await db.query<{ holder: string; expires: number }>("select holder, extract(epoch from expires_at)::float8 * 1000 as expires from index_maintainer"))[0];
const nodeOf = (holder: string | undefined) => nodes.find((n) => holder?.startsWith(`${os.hostname()}/${n.child.pid}/`));

// Distinct words per fact: under bag-of-words embeddings each fact is its own only nearest neighbour.
const words = {
  a: ["amber", "cobalt", "crimson", "ivory", "jade", "ochre", "scarlet", "teal", "violet", "umber", "saffron", "indigo", "olive", "coral", "slate"],
  b: ["otter", "heron", "badger", "falcon", "lynx", "marten", "osprey", "weasel", "bison", "gecko", "ibis", "tapir", "walrus", "yak", "egret"],
  c: ["Lisbon", "Oslo", "Quito", "Hanoi", "Dakar", "Perth", "Lima", "Riga", "Accra", "Bern", "Cusco", "Minsk", "Porto", "Sofia", "Tunis"],
};
let factCount = 0;
const nextFact = () => {
  const i = factCount++;
  return `The ${words.a[i % 15]} ${words.b[i % 15]} server ships from ${words.c[i % 15]} every quarter ${i}`;
};

async function write(node: Node, content: string): Promise<string> {
  const created = await rest(node.url, key)("POST", "/api/v1/agent/memories", { content, type: "fact" });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.ids[0];
}

async function recallFirst(node: Node, query: string): Promise<string | undefined> {
  const found = await rest(node.url, key)("POST", "/api/v1/agent/recall", { query, searchMode: "semantic", limit: 1 });
  expect(found.status, JSON.stringify(found.body)).toBe(200);
  return found.body.memories[0]?.id;
}

/** Writes `perNode` facts on every node at once; returns each fact with its id. */
async function writeEverywhere(on: Node[], perNode: number): Promise<Array<{ content: string; id: string }>> {
  const facts = on.flatMap((node) => Array.from({ length: perNode }, () => ({ node, content: nextFact() })));
  return Promise.all(facts.map(async (f) => ({ content: f.content, id: await write(f.node, f.content) })));
}

beforeAll(async () => {
  [embeddings, s3, database, root] = await Promise.all([
    hashEmbeddingServer(),
    startS3Server(),
    freshPostgresDatabase(),
    mkdtemp(path.join(os.tmpdir(), "agentmem-s3-nodes-")),
  ]);
  db = await openDatabase({ databaseUrl: database.url, dataDir: "memory://", poolSize: 2, vector: false });
  // On an empty bucket one node starts first and creates the index's tables, as the docs ask: a second
  // creation of a table would rewrite its first manifest, which s3rver (without S3's conditional puts)
  // lets a reader see half replaced. Then two at once, on the tables it made.
  nodes = await startNodes(["a"]);
  nodes.push(...(await startNodes(["b", "c"])));
  key = (await rest(nodes[0]!.url, adminKey)("POST", "/api/v1/admin/keys", { workspace: "acme", container: "agent-1" })).body.key;
}, startsProcessesTimeoutMs);

afterAll(async () => {
  await Promise.all(nodes.map((n) => stopNode(n, "SIGKILL")));
  await db?.close();
  await database?.drop();
  await s3?.close();
  await embeddings?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

// Each test starts or stops processes, or makes dozens of calls to three of them: minutes on a loaded machine.
describe("three nodes on one bucket of an S3-compatible server", { timeout: startsProcessesTimeoutMs }, () => {
  it("recall on every node what every node wrote at once, as soon as each write is acknowledged", async () => {
    const facts = await writeEverywhere(nodes, 4);
    for (const node of nodes) {
      for (const fact of facts) expect(await recallFirst(node, fact.content), `${fact.content} on node ${node.name}`).toBe(fact.id);
    }
  });

  it("lose no acknowledged write: the index holds every memory Postgres holds", async () => {
    await writeEverywhere(nodes, 6);
    expect(await missingFromIndex()).toEqual([]);
    expect(nodeOf((await lease())?.holder)).toBeDefined();
  });

  it("move the maintainer role to another node within a lease of a SIGKILL, which then indexes what the others write", async () => {
    const dead = (await lease())!;
    const killed = nodeOf(dead.holder)!;
    await stopNode(killed, "SIGKILL");
    // Taken over on the database clock: not before the dead holder's lease ran out, and within a lease after.
    await until("another node holds the lease", async () => (await lease())?.holder !== dead.holder);
    const taken = (await lease())!;
    const acquired = taken.expires - leaseMs;
    expect(acquired).toBeGreaterThanOrEqual(dead.expires);
    expect(acquired - dead.expires).toBeLessThanOrEqual(leaseMs);
    const survivors = nodes.filter((n) => n !== killed);
    expect(nodeOf(taken.holder)).toBeDefined();

    const facts = await writeEverywhere(survivors, 4);
    for (const node of survivors) expect(await recallFirst(node, facts[0]!.content)).toBe(facts[0]!.id);
    expect(await missingFromIndex()).toEqual([]);
    nodes = survivors;
  });

  it("reconcile at a restart: memories the index lost are indexed again", async () => {
    await Promise.all(nodes.map((n) => stopNode(n, "SIGTERM")));
    // With every node stopped the test is the bucket's only writer: it takes some memories out of the index.
    const removed = [...(await storedIds())].slice(0, 5);
    await withMemoriesTable((table) => table.delete(`id in (${removed.map((id) => `'${id}'`).join(", ")})`));
    expect((await missingFromIndex()).sort()).toEqual(removed.sort());

    nodes = await startNodes(["a", "c"]);
    await until("the index holds every memory again", async () => (await missingFromIndex()).length === 0);
  });
});

describe("a node whose bucket cannot be reached", { timeout: startsProcessesTimeoutMs }, () => {
  const start = (env: Record<string, string>) =>
    startApp(
      loadConfig({
        PORT: "0",
        HOST: "127.0.0.1",
        LOG_LEVEL: "silent",
        DATABASE_URL: database.url,
        DATA_DIR: "memory://",
        ...embeddings.env,
        ...s3.env,
        ...env,
      }),
    );
  /** The start-up error's message; it must be one line. */
  const refusal = async (env: Record<string, string>) => {
    const err = (await start(env).then(
      (app) => app.close().then(() => new Error("started")),
      (e: unknown) => e,
    )) as Error;
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).not.toContain("\n");
    return err.message;
  };

  it("is stopped at start with one line naming LANCEDB_URI and what the store answered", async () => {
    expect(await refusal({ LANCEDB_URI: "s3://no-such-bucket/agentmem" })).toMatch(/^LANCEDB_URI=s3:\/\/no-such-bucket\/agentmem cannot be reached: NoSuchBucket.*LANCEDB_STORAGE_ENDPOINT/);
    expect(await refusal({ LANCEDB_URI: lanceUri(s3.bucket), LANCEDB_STORAGE_ALLOW_HTTP: "false" })).toMatch(/cannot be reached: .*plain http.*LANCEDB_STORAGE_ALLOW_HTTP=true/);
  });
});
