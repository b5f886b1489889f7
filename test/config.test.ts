import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { indexWritersOf } from "../src/search/vector/open-vector-index.js";

describe("configuration", () => {
  it("uses documented defaults", () => {
    expect(loadConfig({})).toMatchObject({ PORT: 8080, HOST: "0.0.0.0", DATA_DIR: "./data", LOG_LEVEL: "info" });
    expect(loadConfig({}).DATABASE_URL).toBeUndefined();
    expect(loadConfig({}).REQUEST_BODY_TIMEOUT_MS).toBe(10_000);
  });

  it("names every invalid variable and the rule it breaks", () => {
    let error: unknown;
    try {
      loadConfig({ PORT: "http", DATABASE_URL: "mysql://db", LOG_LEVEL: "loud", AGENTMEM_ADMIN_KEY: "short", REQUEST_BODY_TIMEOUT_MS: "0" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ["PORT", "DATABASE_URL", "LOG_LEVEL", "AGENTMEM_ADMIN_KEY", "REQUEST_BODY_TIMEOUT_MS"]) expect(message).toContain(name);
    expect(message).toContain("postgres://");
  });

  it("refuses the cache sizes counted in entries, naming the byte caps that replaced them", () => {
    expect(() => loadConfig({ EMBEDDING_CACHE_SIZE: "10000", EMBEDDING_WRITE_CACHE_SIZE: "4096" })).toThrow(
      /EMBEDDING_CACHE_SIZE: no longer read.*EMBEDDING_CACHE_BYTES[\s\S]*EMBEDDING_WRITE_CACHE_SIZE: no longer read.*EMBEDDING_WRITE_CACHE_BYTES/,
    );
    expect(loadConfig({})).toMatchObject({ EMBEDDING_CACHE_BYTES: 16 * 1024 * 1024, EMBEDDING_WRITE_CACHE_BYTES: 16 * 1024 * 1024, AUTH_CACHE_BYTES: 4 * 1024 * 1024 });
  });

  it("stops the server at start with the message and a non-zero exit", async () => {
    const result = await promisify(execFile)("npx", ["tsx", "src/main.ts"], {
      env: { ...process.env, PORT: "99999" },
      timeout: 30_000,
    }).then(
      () => ({ code: 0, stderr: "" }),
      (err: { code: number; stderr: string }) => err,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("PORT");
  });

  it("hands LANCEDB_STORAGE_* to LanceDB as storage options, and lets only the maintainer write an object store by default", () => {
    const config = loadConfig({
      LANCEDB_URI: "s3://bucket/agentmem",
      LANCEDB_STORAGE_ENDPOINT: "http://127.0.0.1:9000",
      LANCEDB_STORAGE_ALLOW_HTTP: "true",
      LANCEDB_STORAGE_ACCESS_KEY_ID: "key",
    });
    expect(config.lanceStorageOptions).toEqual({ endpoint: "http://127.0.0.1:9000", allow_http: "true", access_key_id: "key" });
    expect(indexWritersOf(config)).toBe("maintainer");
    expect(indexWritersOf(loadConfig({ LANCEDB_URI: "s3://bucket/agentmem", LANCEDB_WRITERS: "every-node" }))).toBe("every-node");
    expect(indexWritersOf(loadConfig({ LANCEDB_URI: "/srv/agentmem/lance" }))).toBe("every-node");
    expect(indexWritersOf(loadConfig({ LANCEDB_URI: "s3://bucket/agentmem", VECTOR_BACKEND: "pgvector" }))).toBe("every-node");
    expect(() => loadConfig({ LANCEDB_WRITERS: "some" })).toThrow(/LANCEDB_WRITERS/);
  });
});
