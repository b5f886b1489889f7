import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, startTestServer, type TestServer } from "../support/test-server.js";

describe("GET /api/v1/agent/openapi.json", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("pglite");
  });
  afterAll(() => server?.close());

  it("serves the generated document to any valid key, and 401 without one", async () => {
    const key = await server.createKey("acme", "agent-1");
    const res = await rest(server.url, key)("GET", "/api/v1/agent/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body).toEqual(JSON.parse(await readFile("gen/openapi.json", "utf8")));
    const anonymous = await fetch(`${server.url}/api/v1/agent/openapi.json`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe("auth_failed");
  });

  it("describes exactly the routes the server serves", async () => {
    const doc = JSON.parse(await readFile("gen/openapi.json", "utf8")) as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((verb) => ({ method: verb.toUpperCase(), url: path.replace(/\{([^}]+)\}/g, ":$1") })),
    );
    expect(documented.length).toBeGreaterThan(8);
    for (const route of documented) expect(server.app.fastify.hasRoute(route), `${route.method} ${route.url}`).toBe(true);

    const served = server.app.fastify
      .printRoutes({ commonPrefix: false })
      .split("\n")
      .filter((line) => line.includes("/api/v1/"));
    expect(served.length).toBeGreaterThan(0);
  });
});
