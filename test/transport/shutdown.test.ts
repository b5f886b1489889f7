import http from "node:http";
import { Writable } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { startApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { adminKey, freshPostgresDatabase, rest, startsProcessesTimeoutMs } from "../support/test-server.js";

/**
 * A server on a fresh database with a recall in flight whose client has hung up: the recall waits for a
 * lock the returned `locker` holds on the usage counters until `release()`.
 */
async function withAbandonedRecall(env: Record<string, string>, run: (t: { app: App; lines: string[]; release(): Promise<void>; locker: pg.Client; query: string }) => Promise<void>) {
  const database = await freshPostgresDatabase();
  const lines: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const config = loadConfig({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: "memory://", LOG_LEVEL: "warn", AGENTMEM_ADMIN_KEY: adminKey, DATABASE_URL: database.url, ...env });
  const app = await startApp(config, { logStream });
  const locker = new pg.Client({ connectionString: database.url });
  await locker.connect();
  let released = false;
  const release = async () => {
    if (!released) await locker.query("commit");
    released = true;
  };
  try {
    const { key } = (await rest(app.url, adminKey)("POST", "/api/v1/admin/keys", { workspace: "acme", container: "agent-1" })).body;
    await locker.query("begin");
    await locker.query("lock table usage_periods in share row exclusive mode");
    const query = "which call outlives its client";
    const req = http.request(`${app.url}/api/v1/agent/recall`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } });
    req.on("error", () => undefined);
    req.end(JSON.stringify({ query, searchMode: "hybrid" }));
    const waiting = "select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'";
    while ((await locker.query(waiting)).rowCount === 0) await nextTurn();
    req.destroy();
    await run({ app, lines, release, locker, query });
  } finally {
    await release();
    await locker.end();
    await app.close().catch(() => undefined);
    await database.drop();
  }
}

describe("shutdown", () => {
  it("lets a call whose client has hung up finish before storage closes", async () => {
    await withAbandonedRecall({}, async ({ app, lines, release, locker, query }) => {
      // Closing the HTTP server waits for connections only, and this one is gone.
      const closing = app.close();
      await release();
      await closing;
      expect(lines.filter((line) => line.includes("unexpected failure"))).toEqual([]);
      expect((await locker.query("select query from recall_traces")).rows).toEqual([{ query }]);
    });
  }, startsProcessesTimeoutMs);

  it("gives such a call SHUTDOWN_GRACE_MS, then closes the rest around it", async () => {
    await withAbandonedRecall({ SHUTDOWN_GRACE_MS: "200" }, async ({ app, release }) => {
      const closing = app.close();
      // The recall still waits for the lock, and the vector index closes all the same.
      while (await app.vectors.count().then(() => true, () => false)) await nextTurn();
      await release();
      await closing;
    });
  }, startsProcessesTimeoutMs);
});
