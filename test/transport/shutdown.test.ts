import http from "node:http";
import { Writable } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { startApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { adminKey, freshPostgresDatabase, rest, startsProcessesTimeoutMs } from "../support/test-server.js";

describe("shutdown", () => {
  it("lets a call whose client has hung up finish before storage closes", async () => {
    const database = await freshPostgresDatabase();
    const lines: string[] = [];
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const config = loadConfig({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: "memory://", LOG_LEVEL: "warn", AGENTMEM_ADMIN_KEY: adminKey, DATABASE_URL: database.url });
    const app = await startApp(config, { logStream });
    let closing: Promise<void> | undefined;
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    try {
      const { key } = (await rest(app.url, adminKey)("POST", "/api/v1/admin/keys", { workspace: "acme", container: "agent-1" })).body;
      // The recall's usage charge waits for this lock, so the call is in flight until the test commits.
      await locker.query("begin");
      await locker.query("lock table usage_periods in share row exclusive mode");
      const query = "which call outlives its client";
      const req = http.request(`${app.url}/api/v1/agent/recall`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } });
      req.on("error", () => undefined);
      req.end(JSON.stringify({ query, searchMode: "hybrid" }));
      const waiting = "select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'";
      while ((await locker.query(waiting)).rowCount === 0) await nextTurn();
      req.destroy();
      // Closing the HTTP server waits for connections only, and this one is gone.
      closing = app.close();
      await locker.query("commit");
      await closing;
      expect(lines.filter((line) => line.includes("unexpected failure"))).toEqual([]);
      expect((await locker.query("select query from recall_traces")).rows).toEqual([{ query }]);
    } finally {
      await locker.end();
      await (closing ?? app.close());
      await database.drop();
    }
  }, startsProcessesTimeoutMs);
});
