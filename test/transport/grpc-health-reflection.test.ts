import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpc, grpcHealthCheck, grpcHealthClient } from "../support/grpc-client.js";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

const run = promisify(execFile);

/** buf curl with the schema from server reflection only (no --schema), over gRPC on h2c. */
function bufCurl(args: string[]) {
  return run("node_modules/.bin/buf", ["curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args], { timeout: 60_000 });
}

describe.each(backends)("gRPC health checking and server reflection on the API port (%s)", (backend) => {
  let server: TestServer;
  let key: string;
  let health: any;
  let closed = false;

  beforeAll(async () => {
    server = await startTestServer(backend);
    key = await server.createKey("acme", "agent-1");
    health = grpcHealthClient(server.url);
  });
  afterAll(async () => {
    health?.close();
    if (!closed) await server?.close();
  });

  it("answers Health/Check without a key: SERVING for the server and each service, NOT_FOUND for others", async () => {
    expect(await grpcHealthCheck(health, "")).toEqual({ status: "SERVING" });
    expect(await grpcHealthCheck(health, "agent.v1.MemoryService")).toEqual({ status: "SERVING" });
    const unknown = await grpcHealthCheck(health, "agent.v1.NoSuchService").catch((err: grpc.ServiceError) => err);
    expect((unknown as grpc.ServiceError).code).toBe(grpc.status.NOT_FOUND);
  });

  it("lets buf curl call an RPC with nothing but server reflection, over v1 and v1alpha", async () => {
    const auth = `authorization: Bearer ${key}`;
    const post = rest(server.url, key);
    const created = await post("POST", "/api/v1/agent/memories", { content: "Reflection finds the schema", type: "fact" });
    expect(created.status).toBe(200);

    for (const reflectProtocol of ["grpc-v1", "grpc-v1alpha"]) {
      const { stdout } = await bufCurl([
        "--reflect-protocol",
        reflectProtocol,
        "--reflect-header",
        auth,
        "-H",
        auth,
        "-d",
        '{"pageSize": 5}',
        `${server.url}/agent.v1.MemoryService/ListMemories`,
      ]);
      const listed = JSON.parse(stdout);
      expect(listed.memories.map((m: { content: string }) => m.content), reflectProtocol).toEqual(["Reflection finds the schema"]);
    }

    const services = (await bufCurl(["--reflect-header", auth, "--list-services", server.url])).stdout.trim().split("\n");
    expect(services).toEqual(
      expect.arrayContaining(["agent.v1.MemoryService", "agent.v1.RecallService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"]),
    );

    // Like the OpenAPI document, the schema is for callers with a key.
    const refused = await bufCurl(["--list-services", server.url]).catch((err: { stderr: string }) => err);
    expect((refused as { stderr: string }).stderr).toMatch(/not authenticated/);
  });

  it("streams Health/Watch: SERVING, then NOT_SERVING when the server shuts down, and ends the stream", async () => {
    const statuses: string[] = [];
    const call = health.Watch({ service: "" });
    const ended = new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve));
    const first = new Promise<void>((resolve) => call.once("data", () => resolve()));
    call.on("data", (res: { status: string }) => statuses.push(res.status));
    await first;
    closed = true;
    await server.close();
    expect((await ended).code).toBe(grpc.status.OK);
    expect(statuses).toEqual(["SERVING", "NOT_SERVING"]);
  });
});
