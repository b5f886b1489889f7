import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { openDatabase } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrations.js";
import { adminKey, freshPostgresDatabase, rest, startTestServer } from "../support/test-server.js";

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
  });

  it("migrates once: a second run applies nothing", async () => {
    const db = await openDatabase({ dataDir: "memory://", poolSize: 1 });
    expect(await migrate(db)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]);
    expect(await migrate(db)).toEqual([]);
    await db.close();
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
