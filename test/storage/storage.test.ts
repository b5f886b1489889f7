import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { openDatabase } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrations.js";
import { duplicatesSql, findDuplicates } from "../../src/memories/memory-store.js";
import { recheckCandidates } from "../../src/recall/candidate-store.js";
import { adminKey, freshPostgresDatabase, rest, startsProcessesTimeoutMs, startTestServer } from "../support/test-server.js";

describe("storage", () => {
  it("keeps PGlite data in DATA_DIR across restarts", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "agentmem-data-"));
    try {
      const env = { DATA_DIR: dataDir };
      const first = await startTestServer("pglite", env);
      const key = await first.createKey("acme", "agent-1");
      const created = await rest(first.url, key)("POST", "/api/v1/agent/memories", { content: "survives restarts", type: "fact" });
      await first.close();

      const second = await startTestServer("pglite", env);
      const got = await rest(second.url, key)("GET", `/api/v1/agent/memories/${created.body.ids[0]}`);
      await second.close();
      expect(got.status).toBe(200);
      expect(got.body.content).toBe("survives restarts");
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, startsProcessesTimeoutMs);

  it("migrates once: a second run applies nothing; PGlite runs with the configured shared_buffers", async () => {
    const db = await openDatabase({ dataDir: "memory://", poolSize: 1, pgliteSharedBuffersBytes: 16 * 1024 * 1024 });
    // PGlite touches all of shared_buffers at start: every byte of it is resident.
    expect(await db.query("show shared_buffers")).toEqual([{ shared_buffers: "16MB" }]);
    expect(await migrate(db)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16, 17, 18]);
    expect(await migrate(db)).toEqual([]);
    await db.close();
  });

  it.each(["pglite", "postgres"] as const)("reads bytea back byte for byte, as a Buffer on both backends (%s)", async (backend) => {
    const server = backend === "postgres" ? await freshPostgresDatabase() : undefined;
    const db = await openDatabase({ databaseUrl: server?.url, dataDir: "memory://", poolSize: 1 });
    try {
      // The size of a 512-d vector as an indexing job stores it, every byte value, and nothing.
      const bytes = Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 37) % 256));
      const [row] = await db.query<{ vector: Uint8Array; empty: Uint8Array; none: Uint8Array | null }>(
        "select decode($1, 'base64') as vector, decode('', 'hex') as empty, null::bytea as none",
        [bytes.toString("base64")],
      );
      expect(Buffer.isBuffer(row!.vector)).toBe(true);
      expect(Buffer.compare(row!.vector, bytes)).toBe(0);
      expect(Buffer.isBuffer(row!.empty) && row!.empty.length).toBe(0);
      expect(row!.none).toBeNull();
    } finally {
      await db.close();
      await server?.drop();
    }
  });

  it("keeps recall's hot statements prepared on a PostgreSQL server's connection, unless DATABASE_PREPARED_STATEMENTS=false", async () => {
    const server = await freshPostgresDatabase();
    // One connection, so the session that ran the statements is the one asked for its prepared statements.
    const prepared = await openDatabase({ databaseUrl: server.url, dataDir: "memory://", poolSize: 1 });
    const unprepared = await openDatabase({ databaseUrl: server.url, dataDir: "memory://", poolSize: 1, preparedStatements: false });
    const statements = async (db: typeof prepared) =>
      (await db.query<{ statement: string }>("select statement from pg_prepared_statements")).map((r) => r.statement);
    try {
      await migrate(prepared);
      for (const db of [prepared, unprepared]) {
        for (const n of [1, 2]) {
          expect(await db.query("select $1::int + 1 as n", [n], { prepare: true })).toEqual([{ n: n + 1 }]);
          expect(await db.transaction((tx) => tx.query("select $1::int * 10 as n", [n], { prepare: true }))).toEqual([{ n: n * 10 }]);
          expect(await db.query("select $1::int - 1 as n", [n])).toEqual([{ n: n - 1 }]);
        }
        expect(await recheckCandidates(db, { workspaceId: "wsp_none", container: null }, ["mem_none"], { query: "anything", words: true }, null)).toEqual([]);
      }
      const kept = await statements(prepared);
      expect(kept.filter((s) => s === "select $1::int + 1 as n")).toHaveLength(1);
      expect(kept.filter((s) => s === "select $1::int * 10 as n")).toHaveLength(1);
      expect(kept.some((s) => s.includes("select $1::int - 1"))).toBe(false);
      expect(kept.filter((s) => s.includes("ts_debug"))).toHaveLength(1);
      expect(await statements(unprepared)).toEqual([]);
    } finally {
      await prepared.close();
      await unprepared.close();
      await server.drop();
    }
  });

  it("plans PGlite queries on the data it holds: grown tables are vacuumed and analysed", async () => {
    const db = await openDatabase({ dataDir: "memory://", poolSize: 1 });
    try {
      await migrate(db);
      await db.query("insert into workspaces (id, name) select 'ws' || i, 'ws' || i from generate_series(1, 50) i");
      await db.query("insert into author_profiles (workspace_id, handle) select 'ws' || i, 'h' || i from generate_series(1, 50) i");
      await db.query(
        `insert into skills (id, workspace_id, slug, name, description, content, maturity, visibility, source, state, version, key_id, created_at, updated_at)
         select 'skl' || i, 'ws' || (1 + i % 50), 's' || i, 'n' || i, 'd' || i, 'body', 'stable', 'public', 'authored', 'active', 1, 'k', now(), now()
           from generate_series(1, 5000) i`,
      );
      await db.query(
        `insert into marketplace_listings (skill_id, workspace_id, status, version, first_published_at, published_at, popularity)
         select 'skl' || i, 'ws' || (1 + i % 50), 'listed', 1, now(), now(), i from generate_series(1, 5000) i`,
      );
      // A marketplace page: 20 listings, most popular first, with their skills and authors.
      const page = `explain select s.id from marketplace_listings l join skills s on s.id = l.skill_id
        join author_profiles p on p.workspace_id = l.workspace_id
        where l.status = 'listed' and s.state = 'active' order by l.popularity desc, l.skill_id desc limit 20`;
      const plan = async () => (await db.query<{ "QUERY PLAN": string }>(page)).map((r) => r["QUERY PLAN"]).join("\n");
      // Never analysed, the tables look empty, and the planner joins every listing and sorts them all.
      expect(await plan()).toMatch(/Sort/);

      await db.maintain();
      expect(await plan()).not.toMatch(/Sort/);
      expect(await plan()).toContain("marketplace_listings_popular");
      const [listings] = await db.query<{ reltuples: number }>("select reltuples from pg_class where relname = 'marketplace_listings'");
      expect(listings!.reltuples).toBe(5000);
    } finally {
      await db.close();
    }
  });

  it("checks a write for duplicates through the content-hash index, never the containers' index", async () => {
    const db = await openDatabase({ dataDir: "memory://", poolSize: 1 });
    try {
      await migrate(db);
      const ws = "ws_01m8bdryhnkw06ngzfmy38g3e3";
      await db.query("insert into workspaces (id, name) values ($1, 'ws')", [ws]);
      // 10,000 memories of one container, a fifth of them shadowed, analysed.
      await db.query(
        `insert into memories (id, workspace_id, content, type, containers, source, valid_from, confidence, version, key_id,
           created_at, updated_at, content_hash, state)
         select 'mem_01m8bdryhnkw06ngzfmy' || lpad(i::text, 6, '0'), $1, 'The deployment of service ' || i || ' ' || repeat('word' || (i % 97) || ' ', 15),
           'fact', '{bench-1}', 'api', now(), 1, 1, 'k', now(), now(), encode(sha256(i::text::bytea), 'hex'),
           case when i % 5 = 0 then 'shadowed' else 'active' end
         from generate_series(1, 10000) i`,
        [ws],
      );
      await db.maintain();
      const hash = (i: number) => createHash("sha256").update(String(i)).digest("hex");
      const probes = Array.from({ length: 100 }, (_, i) => ({ probe: i, content_hash: hash(50_000 + i), type: "fact", containers: ["bench-1"] }));
      const plan = (await db.query<{ "QUERY PLAN": string }>(`explain ${duplicatesSql}`, [JSON.stringify(probes), ws])).map((r) => r["QUERY PLAN"]).join("\n");
      // The planner guesses one row for containment against a joined array either way; through the
      // containers' index each probe visited every memory of the container (1.1 s for these 100).
      expect(plan).not.toContain("memories_by_container");
      expect(plan).toContain("memories_by_content_hash");

      const probe = (contentHash: string, containers: string[]) => ({ contentHash, type: "fact", containers });
      const [same, moreContainers, shadowed] = await findDuplicates(db, ws, [probe(hash(7), ["bench-1"]), probe(hash(7), ["bench-1", "ops"]), probe(hash(10), ["bench-1"])]);
      expect(same?.id).toBe("mem_01m8bdryhnkw06ngzfmy000007");
      expect(moreContainers).toBeUndefined();
      expect(shadowed).toBeUndefined();
    } finally {
      await db.close();
    }
  });

  it("lets several nodes start on one PostgreSQL database at once and share its data", async () => {
    const database = await freshPostgresDatabase();
    // Nodes of one database share one LanceDB location (test/search/several-nodes.test.ts covers more).
    const lanceDir = await mkdtemp(path.join(os.tmpdir(), "agentmem-nodes-"));
    const config = loadConfig({
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      DATABASE_URL: database.url,
      LANCEDB_URI: lanceDir,
      EMBEDDING_WORKERS: "1",
      AGENTMEM_ADMIN_KEY: adminKey,
    });
    const nodes = await Promise.all([startApp(config), startApp(config), startApp(config)]);
    try {
      const created = await fetch(`${nodes[0]!.url}/api/v1/admin/keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
        body: JSON.stringify({ workspace: "acme", container: "agent-1" }),
      });
      const { key } = (await created.json()) as { key: string };
      const write = await rest(nodes[1]!.url, key)("POST", "/api/v1/agent/memories", { content: "shared", type: "fact" });
      const read = await rest(nodes[2]!.url, key)("GET", `/api/v1/agent/memories/${write.body.ids[0]}`);
      expect(read.body.content).toBe("shared");
    } finally {
      await Promise.all(nodes.map((n) => n.close()));
      await database.drop();
      await rm(lanceDir, { recursive: true, force: true });
    }
  });
});
