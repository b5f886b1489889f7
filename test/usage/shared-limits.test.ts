import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type BenchServer } from "../../bench/lib/server.js";
import { startApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { adminKey, freshPostgresDatabase, rest } from "../support/test-server.js";
import { planEnv } from "./limits-env.js";

// Two server processes, this one and a child, on one PostgreSQL database with RATE_LIMIT_STORE=postgres.
describe("rate limits shared by two server processes on one PostgreSQL database", () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let local: App;
  let child: BenchServer;
  let lanceDir: string;

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    // Nodes of one database search one LanceDB index.
    lanceDir = await mkdtemp(path.join(os.tmpdir(), "agentmem-shared-"));
    const env = { ...planEnv, RATE_LIMIT_STORE: "postgres", DATABASE_URL: database.url, LANCEDB_URI: lanceDir };
    local = await startApp(loadConfig({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn", AGENTMEM_ADMIN_KEY: adminKey, ...env }));
    child = await startServer(database.url, env);
  });
  afterAll(async () => {
    await child?.stop();
    await local?.close();
    await database?.drop();
    await rm(lanceDir, { recursive: true, force: true });
  });

  async function keyOnBothNodes(name: string) {
    const admin = rest(local.url, adminKey);
    const created = await admin("POST", "/api/v1/admin/keys", { workspace: name, container: "agent-1" });
    expect((await admin("PUT", `/api/v1/admin/workspaces/${name}/plan`, { plan: "shared" })).status).toBe(200);
    return [rest(local.url, created.body.key), rest(child.url, created.body.key)];
  }

  it("admits one key's budget once across both nodes, alternating between them", async () => {
    const nodes = await keyOnBothNodes("shared-a");

    // The plan admits 20 requests at once and refills one per 64 s; alone, each node would admit 20.
    const statuses: number[][] = [[], []];
    for (let i = 0; i < 40; i++) statuses[i % 2]!.push((await nodes[i % 2]!("GET", "/api/v1/agent/stats")).status);
    const admitted = statuses.flat().filter((s) => s === 200).length;
    expect(admitted).toBe(20);
    expect(statuses.every((perNode) => perNode.includes(429) && perNode.includes(200))).toBe(true);
    expect(statuses.flat().every((s) => s === 200 || s === 429)).toBe(true);
  });

  it("admits one key's budget once across both nodes under concurrent requests", async () => {
    const nodes = await keyOnBothNodes("shared-b");
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => nodes[i % 2]!("GET", "/api/v1/agent/stats")));
    expect(results.filter((r) => r.status === 200)).toHaveLength(20);
    expect(results.filter((r) => r.status === 429).every((r) => r.body.error.code === "rate_limited")).toBe(true);
  });
});
