import { copyFile, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpc, grpcClient } from "../support/grpc-client.js";
import { rest, startTestServer, type TestServer } from "../support/test-server.js";

const root = path.resolve(import.meta.dirname, "../..");

describe("GET /api/v1/agent/openapi.json", () => {
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    server = await startTestServer("pglite");
    key = await server.createKey("acme", "agent-1");
  });
  afterAll(() => server?.close());

  it("serves the generated document to any valid key, and 401 without one", async () => {
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
      .filter((line) => line.includes("api/v1/"));
    expect(served.length).toBeGreaterThan(0);
  });

  it("types a client that compiles only with what the document requires, and whose calls the server answers", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-openapi-client-"));
    try {
      const doc = JSON.parse(await readFile("gen/openapi.json", "utf8")) as Parameters<typeof openapiTS>[0];
      await writeFile(path.join(dir, "openapi.d.ts"), astToString(await openapiTS(doc)));
      await copyFile(path.join(root, "test/openapi-client/typed-calls.ts"), path.join(dir, "typed-calls.ts"));
      await writeFile(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
      await symlink(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");

      // Every call must compile, and every @ts-expect-error line must be an error (else TS2578).
      const program = ts.createProgram([path.join(dir, "typed-calls.ts")], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        // A fetch client: the DOM library's fetch types, not Node's (a third of the time to check).
        lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
        types: [],
        skipLibCheck: true,
      });
      const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      expect(diagnostics).toEqual([]);

      const { typedCalls } = (await import(path.join(dir, "typed-calls.ts"))) as { typedCalls: (url: string, key: string) => Promise<any> };
      const result = await typedCalls(server.url, key);
      expect(result.statuses).toEqual({ created: 200, batch: 200, patched: 200, read: 200, recalled: 200, trace: 200, skill: 200, missing: 404 });
      expect(result.memory).toMatchObject({ id: result.id, type: "preference", severity: "low", tags: ["drinks", "morning"], version: 2 });
      expect(result.recalledIds).toContain(result.id);
      expect(result.traceSearchMode).toBe("keyword");
      expect(result.skillSlug).toBe("tea-brewing");
      expect(result.missingCode).toBe("not_found");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses a request without a field the document requires, naming that field, over REST and gRPC", async () => {
    const doc = JSON.parse(await readFile("gen/openapi.json", "utf8")) as {
      paths: Record<string, { post: { requestBody: { content: { "application/json": { schema: { required?: string[] } } } } } }>;
    };
    const requiredOf = (route: string) => doc.paths[route]!.post.requestBody.content["application/json"].schema.required ?? [];
    const valid: Record<string, Record<string, unknown>> = {
      "/api/v1/agent/recall": { query: "tea" },
      "/api/v1/agent/skills": { name: "kettle", description: "Boils water. Use for tea.", content: "# Kettle" },
      "/api/v1/agent/skills/search": { query: "tea" },
    };
    const call = rest(server.url, key);
    for (const [route, body] of Object.entries(valid)) {
      expect(requiredOf(route).length, route).toBeGreaterThan(0);
      for (const field of requiredOf(route)) {
        const { [field]: _, ...without } = body;
        const res = await call("POST", route, without);
        expect(res.status, `${route} without ${field}`).toBe(400);
        expect(res.body.error.details, `${route} without ${field}`).toMatchObject({ field, rule: "required" });
      }
    }
    for (const [body, field] of [
      [{ type: "fact" }, "content"],
      [{ content: "tea" }, "type"],
      [{ memories: [{ content: "tea" }] }, "memories[0].type"],
    ] as const) {
      const res = await call("POST", "/api/v1/agent/memories", body);
      expect(res.body.error.details, JSON.stringify(body)).toEqual({ field, rule: "required" });
    }

    const client = grpcClient(server.url, "RecallService", key);
    try {
      const err = (await client.call("recall", { limit: 3 }).catch((e: unknown) => e)) as grpc.ServiceError;
      expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
      // grpc-js leaves the percent-encoding of grpc-message in place.
      expect(decodeURIComponent(err.details)).toBe("query: is required");
    } finally {
      client.close();
    }
  });
});
