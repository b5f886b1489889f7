import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";

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
});
