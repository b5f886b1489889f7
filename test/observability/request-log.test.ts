import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryService } from "../../gen/agent/v1/memory_pb.js";
import { connectHttp } from "../mcp/mcp-client.js";
import { grpcClient } from "../support/grpc-client.js";
import { adminKey, rest, startTestServer, type TestServer } from "../support/test-server.js";

/** The server's log lines as they are written, and a way to wait for the line of one request. */
function logCollector() {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  type Line = Record<string, unknown>;
  const waiting: Array<{ matches: (line: Line) => boolean; resolve: (line: Line) => void }> = [];
  let partial = "";
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = partial + chunk.toString("utf8");
      const complete = text.split("\n");
      partial = complete.pop()!;
      for (const line of complete) {
        raw.push(line);
        const json = JSON.parse(line) as Record<string, unknown>;
        lines.push(json);
        for (const w of waiting.filter((w) => w.matches(json))) w.resolve(json);
      }
      done();
    },
  });
  return {
    stream,
    raw,
    /** The (first matching) request line of requests sent with this trace id; it is written after the response. */
    requestLine(traceId: string, where: (line: Line) => boolean = () => true): Promise<Line> {
      const matches = (l: Line) => l.msg === "request" && l.traceId === traceId && where(l);
      const found = lines.find(matches);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiting.push({ matches, resolve }));
    },
    linesOf: (traceId: string) => lines.filter((l) => l.traceId === traceId),
  };
}

/** A new W3C trace context: the server logs its trace id. */
function traceparent(): { header: string; traceId: string } {
  const traceId = randomBytes(16).toString("hex");
  return { header: `00-${traceId}-${randomBytes(8).toString("hex")}-01`, traceId };
}

describe("request logs: one line per request on every transport", () => {
  const logs = logCollector();
  let server: TestServer;
  let key: string;
  let keyId: string;

  beforeAll(async () => {
    server = await startTestServer("pglite", { LOG_LEVEL: "info" }, { logStream: logs.stream });
    const res = await rest(server.url, adminKey)("POST", "/api/v1/admin/keys", { workspace: "acme", container: "agent-1" });
    ({ key, id: keyId } = res.body);
  });
  afterAll(() => server?.close());

  it("logs method, route pattern, protocol, status, latency, key id, workspace, trace id and error code", async () => {
    const secretText = `body text that must stay out of logs ${randomBytes(4).toString("hex")}`;
    const call = rest(server.url, key);

    const create = traceparent();
    const created = await call("POST", "/api/v1/agent/memories", { content: secretText, type: "fact" }, { traceparent: create.header });
    expect(created.status).toBe(200);
    const id: string = created.body.ids[0];
    const createLine = await logs.requestLine(create.traceId);
    expect(createLine).toMatchObject({
      level: 30,
      msg: "request",
      method: "POST",
      route: "/api/v1/agent/memories",
      protocol: "rest",
      status: 200,
      keyId,
      workspace: "acme",
      errorCode: null,
      traceId: create.traceId,
    });
    expect(createLine.latencyMs).toEqual(expect.any(Number));

    const missing = traceparent();
    expect((await call("GET", "/api/v1/agent/memories/mem_nope", undefined, { traceparent: missing.header })).status).toBe(404);
    expect(await logs.requestLine(missing.traceId)).toMatchObject({ route: "/api/v1/agent/memories/:id", status: 404, keyId, errorCode: "not_found" });

    const badKey = traceparent();
    await rest(server.url, "amk_wrong")("GET", `/api/v1/agent/memories/${id}`, undefined, { traceparent: badKey.header });
    expect(await logs.requestLine(badKey.traceId)).toMatchObject({ status: 401, keyId: null, workspace: null, errorCode: "auth_failed" });

    const recall = traceparent();
    const recalled = await call("POST", "/api/v1/agent/recall", { query: "what must stay out of logs?" }, { traceparent: recall.header });
    expect(await logs.requestLine(recall.traceId)).toMatchObject({ route: "/api/v1/agent/recall", recallTraceId: recalled.body._meta.traceId });

    const connect = traceparent();
    const memories = createClient(MemoryService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
    await memories.getMemory({ id }, { headers: { authorization: `Bearer ${key}`, traceparent: connect.header } });
    expect(await logs.requestLine(connect.traceId)).toMatchObject({
      method: "POST",
      route: "/agent.v1.MemoryService/GetMemory",
      protocol: "connect",
      status: 200,
      keyId,
      errorCode: null,
    });

    // gRPC answers HTTP 200 with the failure in its trailers: the error code says what happened.
    const grpc = traceparent();
    const grpcMemories = grpcClient(server.url, "MemoryService", key);
    await grpcMemories.call("GetMemory", { id: "mem_nope" }, { traceparent: grpc.header }).catch(() => undefined);
    grpcMemories.close();
    expect(await logs.requestLine(grpc.traceId)).toMatchObject({ protocol: "grpc", status: 200, keyId, errorCode: "not_found" });

    // A failed MCP tool call is an HTTP 200 with an error result; its code is logged too. (The client
    // sends the same header with every message of its session: initialize, then the call.)
    const mcp = traceparent();
    const client = await connectHttp(server.url, key, { traceparent: mcp.header });
    await client.callTool({ name: "memory_create", arguments: { content: secretText, type: "opinion" } });
    await client.close();
    expect(await logs.requestLine(mcp.traceId, (l) => l.errorCode !== null)).toMatchObject({
      route: "/mcp",
      protocol: "mcp",
      status: 200,
      keyId,
      errorCode: "invalid_request",
    });

    // Exactly one line for each request, and no key, header or body in any line.
    for (const traced of [create, missing, badKey, recall, connect, grpc]) expect(logs.linesOf(traced.traceId)).toHaveLength(1);
    const everything = logs.raw.join("\n");
    for (const secret of [key, adminKey, "amk_wrong", secretText, "authorization", "Bearer"]) expect(everything).not.toContain(secret);
  });
});
