import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type App } from "../../src/app.js";
import { ConfigError, loadConfig } from "../../src/config.js";
import { adminKey, freshPostgresDatabase, rest } from "../support/test-server.js";

// Several nodes on one PostgreSQL database and one LanceDB directory, started at the same moment.

const nodeConfig = (databaseUrl: string, env: Record<string, string>) =>
  loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    AGENTMEM_ADMIN_KEY: adminKey,
    DATABASE_URL: databaseUrl,
    DATA_DIR: "memory://",
    EMBEDDING_WORKERS: "1",
    ...env,
  });

/** Indexes everything queued: a job leaves the outbox only after its vector is written, so an empty outbox means all is searchable. */
async function indexAll(nodes: App[]): Promise<void> {
  const queued = async () => (await nodes[0]!.db.query<{ n: number }>("select count(*)::int as n from index_outbox"))[0]!.n;
  while ((await queued()) > 0) await Promise.all(nodes.map((n) => n.indexer.drain()));
}

async function maintainers(nodes: App[]): Promise<number> {
  const held = await Promise.all(nodes.map((n) => n.maintainer!.tryAcquire()));
  return held.filter(Boolean).length;
}

const rounds = 3;

describe.each(Array.from({ length: rounds }, (_, i) => i + 1))("three nodes started at once, round %i", () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let lanceDir: string;
  let nodes: App[] = [];

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    lanceDir = await mkdtemp(path.join(os.tmpdir(), "agentmem-nodes-"));
    const config = nodeConfig(database.url, { LANCEDB_URI: lanceDir });
    const started = await Promise.allSettled([startApp(config), startApp(config), startApp(config)]);
    nodes = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    expect(started.filter((s) => s.status === "rejected")).toEqual([]);
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
    await database?.drop();
    await rm(lanceDir, { recursive: true, force: true });
  });

  it("recalls on every node what was written on any of them", async () => {
    const admin = rest(nodes[0]!.url, adminKey);
    const { key } = (await admin("POST", "/api/v1/admin/keys", { workspace: "acme", container: "agent-1" })).body;
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
      for (const [i, content] of facts.entries()) {
        const found = await rest(node.url, key)("POST", "/api/v1/agent/recall", { query: content, searchMode: "semantic", limit: 1 });
        expect(found.status).toBe(200);
        expect(found.body.memories[0]?.id).toBe(ids[i]);
      }
    }
  });

  it("lets exactly one node maintain the indexes, and another take over when it closes", async () => {
    expect(await maintainers(nodes)).toBe(1);
    const holder = nodes.find((n) => n.maintainer!.holds())!;
    const rest_ = nodes.filter((n) => n !== holder);
    await holder.close();
    nodes = rest_;
    expect(await maintainers(nodes)).toBe(1);
    expect(nodes.filter((n) => n.maintainer!.holds())).toHaveLength(1);
  });
});

describe("a node whose LanceDB location differs from the database's", () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let dirs: string[];
  let first: App;

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    dirs = [await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-a-")), await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-b-"))];
    first = await startApp(nodeConfig(database.url, { LANCEDB_URI: dirs[0]! }));
  });
  afterAll(async () => {
    await first?.close();
    await database?.drop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("is refused at start with a message naming both locations", async () => {
    const refused = startApp(nodeConfig(database.url, { LANCEDB_URI: dirs[1]! }));
    await expect(refused).rejects.toBeInstanceOf(ConfigError);
    const message = (await refused.catch((err: Error) => err.message)) as string;
    expect(message).toContain(dirs[0]);
    expect(message).toContain(dirs[1]);
    expect(message).toContain(`LANCEDB_URI=${dirs[0]}`);
    expect(message).not.toContain("\n");
  });

  it("is refused when its index would be a temporary directory of its own", async () => {
    await expect(startApp(nodeConfig(database.url, {}))).rejects.toThrow(/temporary directory.*LANCEDB_URI=/);
  });

  it("accepts the same directory written differently, and an API-only node never maintains", async () => {
    const relative = path.relative(process.cwd(), dirs[0]!);
    const apiOnly = await startApp(nodeConfig(database.url, { LANCEDB_URI: relative, INDEXER_ENABLED: "false" }));
    try {
      expect(apiOnly.maintainer).toBeNull();
      expect(await first.maintainer!.tryAcquire()).toBe(true);
    } finally {
      await apiOnly.close();
    }
  });
});
