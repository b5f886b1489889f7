import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { startApp, type App, type StartOptions } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";

export type Backend = "pglite" | "postgres";
export const backends: Backend[] = ["pglite", "postgres"];

/**
 * The time a test gets that starts servers or processes of its own: in full suites on a loaded 2-core
 * machine two PGlite server starts took 31 s, and one start with 20 writes, 24 recalls and a shutdown
 * 30 s (19 s in a quieter run), past vitest's 30 s per test.
 */
export const startsProcessesTimeoutMs = 120_000;

export const adminKey = "test-admin-key-" + randomBytes(8).toString("hex");

export interface TestServer {
  app: App;
  url: string;
  backend: Backend;
  /** Creates an API key through the admin REST API and returns its secret. */
  createKey(workspace: string, container?: string): Promise<string>;
  close(): Promise<void>;
}

/** A fresh, empty database for one test file on the shared test cluster. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = inject("postgresUrl");
  const name = `agentmem_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** Starts the real server on a loopback port with the given storage backend. */
export async function startTestServer(backend: Backend, env: Record<string, string> = {}, options: StartOptions = {}): Promise<TestServer> {
  const database = backend === "postgres" ? await freshPostgresDatabase() : undefined;
  const app = await startApp(
    loadConfig({
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: "memory://",
      LOG_LEVEL: "warn",
      AGENTMEM_ADMIN_KEY: adminKey,
      ...(database ? { DATABASE_URL: database.url } : {}),
      ...env,
    }),
    options,
  );
  return {
    app,
    url: app.url,
    backend,
    async createKey(workspace, container) {
      const res = await fetch(`${app.url}/api/v1/admin/keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
        body: JSON.stringify({ workspace, container }),
      });
      if (!res.ok) throw new Error(`createKey failed: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { key: string }).key;
    },
    async close() {
      await app.close();
      await database?.drop();
    },
  };
}

/** A Connect JSON client bound to one API key: `call("MemoryService", "CreateMemories", body)`. */
export function connectJson(base: string, key: string) {
  return async (service: string, method: string, body: unknown) => {
    const res = await fetch(`${base}/agent.v1.${service}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
}

/** A small JSON REST client bound to one API key. */
export function rest(base: string, key: string) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
      body: body === undefined ? null : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as any };
  };
}
