import http from "node:http";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCodes } from "../../src/errors/codes.js";
import { startTestServer, startsProcessesTimeoutMs, type TestServer } from "../support/test-server.js";

// URLs under /console that can name no file of the build (a ".." segment, a NUL, a backslash), sent to
// the real server as they are written (node:http sends the path unnormalised, as curl --path-as-is does):
// a client error in the error model, never a 500 with a logged stack. Legitimate assets are still served.

/** Sends one GET with the path exactly as given. */
function rawGet(base: string, rawPath: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: rawPath, method: "GET", headers, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, type: String(res.headers["content-type"]), body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("console URLs that name no file", () => {
  const levels: number[] = [];
  const logs = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) levels.push((JSON.parse(line) as { level: number }).level);
      done();
    },
  });
  let server: TestServer;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "agentmem-console-paths-"));
    mkdirSync(path.join(dir, "assets"));
    writeFileSync(path.join(dir, "index.html"), '<!doctype html><script type="module" src="/console/assets/app-0a1b2c3d.js"></script>');
    writeFileSync(path.join(dir, "assets/app-0a1b2c3d.js"), "export {};\n");
    server = await startTestServer("pglite", { CONSOLE_DIR: dir, LOG_LEVEL: "info" }, { logStream: logs });
  }, startsProcessesTimeoutMs);
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers 400 invalid_request in the error model without logging an error, and still serves the build", async () => {
    const bad = [
      "/console/../../etc/passwd",
      "/console/../../../../../../etc/passwd",
      "/console/a%00b",
      "/console/assets/\\..\\",
      "/console/assets/%5c..%5cindex.html",
      "/console/%2e%2e/%2e%2e/package.json",
      "/console/..%2f..%2fpackage.json",
      "/console/assets/..",
    ];
    for (const rawPath of bad) {
      const res = await rawGet(server.url, rawPath);
      expect([400, 404], rawPath).toContain(res.status);
      expect(res.type).toBe("application/json; charset=utf-8");
      const body = JSON.parse(res.body) as { error: { code: keyof typeof errorCodes; message: string; details: Record<string, string> } };
      expect(Object.keys(body), rawPath).toEqual(["error"]);
      expect(errorCodes[body.error.code].http, rawPath).toBe(res.status);
      expect(body.error.code, rawPath).not.toBe("server_error");
      expect(body.error.details, rawPath).toMatchObject({ field: "path", rule: "format" });
      expect(body.error.message).not.toContain("passwd");
    }

    // A range past the end of an asset is @fastify/send's own refusal (416): a client error too, not a 500.
    const range = await rawGet(server.url, "/console/assets/app-0a1b2c3d.js", { range: "bytes=5000-6000" });
    expect(range.status).toBe(400);
    expect(JSON.parse(range.body)).toMatchObject({ error: { code: "invalid_request", details: { field: "range" } } });

    // The build is served as before; unknown console URLs get the console's not-found page.
    const page = await rawGet(server.url, "/console/");
    expect(page.status).toBe(200);
    expect(page.body).toContain("app-0a1b2c3d.js");
    const script = await rawGet(server.url, "/console/assets/app-0a1b2c3d.js");
    expect(script.status).toBe(200);
    expect(script.body).toBe("export {};\n");
    const missing = await rawGet(server.url, "/console/nope");
    expect(missing.status).toBe(404);
    expect(missing.type).toBe("text/html; charset=utf-8");

    // pino's error level is 50: nothing at or above it (a request line is written after its answer).
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(levels.length).toBeGreaterThan(0);
    expect(levels.filter((level) => level >= 50)).toEqual([]);
  });
});
