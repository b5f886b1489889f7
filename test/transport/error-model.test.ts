import type http2 from "node:http2";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetMemoryRequestSchema } from "../../gen/agent/v1/memory_pb.js";
import { expectConnectError, expectGrpcError, expectRestError, grpcFrame, h1Raw, h2Request } from "../support/error-model.js";
import { rest, startTestServer, type TestServer } from "../support/test-server.js";

// Requests that fail before any RPC runs (routing, framing, decoding, encodings, timeouts, stalled
// bodies) answer in the error model on every transport, with the rate-limit headers, in bounded time.

const bodyTimeoutMs = 800;
// A stalled body is answered after the deadline; the margin covers a loaded machine.
const stalledTestTimeout = bodyTimeoutMs + 8000;

describe("errors outside the RPCs are in the error model", () => {
  let server: TestServer;
  let key: string;
  let auth: Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer("pglite", { REQUEST_BODY_TIMEOUT_MS: String(bodyTimeoutMs) });
    key = await server.createKey("acme", "agent-1");
    auth = { authorization: `Bearer ${key}` };
  });
  afterAll(async () => {
    await server?.close();
  });

  const fetchText = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(server.url + path, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };

  describe("REST", () => {
    it("answers an over-long path parameter from the service, not Fastify's 414", async () => {
      const res = await fetchText(`/api/v1/agent/memories/mem_${"a".repeat(200)}`);
      const error = expectRestError(res.status, res.headers, res.text);
      expect(error.code).toBe("not_found");
      expect(error.message.length).toBeLessThan(200);
    });

    it.each([
      [{ content: "x", type: "fact", tags: "a" }, "tags: expected an array of strings"],
      [{ content: "x", type: "fact", confidence: "high" }, "confidence: expected a number"],
      [{ content: 7, type: "fact" }, "content: expected a string"],
      [{ content: "x", type: "fact", metadata: [1] }, "metadata: expected a JSON object"],
      [{ memories: [{ content: "x", type: "fact", containers: [1] }] }, "memories.containers: expected an array of strings"],
    ])("names the type a field expects: %j", async (body, message) => {
      for (const path of ["/api/v1/agent/memories", "/agent.v1.MemoryService/CreateMemories"]) {
        // Connect JSON spells enum values by their proto names.
        const json = JSON.stringify(body).replaceAll('"fact"', path.startsWith("/api") ? '"fact"' : '"MEMORY_TYPE_FACT"');
        const res = await fetchText(path, { method: "POST", headers: { "content-type": "application/json" }, body: json });
        const error = path.startsWith("/api") ? expectRestError(res.status, res.headers, res.text) : JSON.parse(res.text);
        expect(res.status, path).toBe(400);
        expect(error.message, path).toBe(message);
      }
    });

    it("answers a malformed percent-escape with invalid_request naming the path", async () => {
      const res = await fetchText("/api/v1/agent/memories/%zz");
      expect(expectRestError(res.status, res.headers, res.text)).toMatchObject({ code: "invalid_request", details: { field: "path", rule: "format" } });
    });

    it.each([["identity, gzip"], ["br"], ["gzip"]])("refuses content-encoding %s with rule content_encoding", async (encoding) => {
      const json = JSON.stringify({ content: "x", type: "fact" });
      const body = encoding === "br" ? brotliCompressSync(json) : encoding === "gzip" ? gzipSync(json) : json;
      const res = await fetchText("/api/v1/agent/memories", {
        method: "POST",
        headers: { "content-type": "application/json", "content-encoding": encoding },
        body,
      });
      expect(expectRestError(res.status, res.headers, res.text)).toMatchObject({
        code: "invalid_request",
        details: { field: "content-encoding", rule: "content_encoding" },
      });
    });

    it("answers a path that exists, asked with a method it lacks, 405 with Allow; an unknown path 404", async () => {
      const put = await fetchText("/api/v1/agent/memories", { method: "PUT" });
      expect(put.headers.get("allow")).toBe("GET, HEAD, POST");
      expect(expectRestError(put.status, put.headers, put.text)).toMatchObject({ code: "method_not_allowed", details: { method: "PUT", allow: "GET, HEAD, POST" } });
      const post = await fetchText("/api/v1/agent/memories/mem_1?x=1", { method: "POST" });
      expect(post.headers.get("allow")).toBe("GET, HEAD, PATCH, DELETE");
      expect(expectRestError(post.status, post.headers, post.text)).toMatchObject({ code: "method_not_allowed", message: "/api/v1/agent/memories/mem_1 answers GET, HEAD, PATCH, DELETE, not POST" });
      const unknown = await fetchText("/api/v1/agent/nowhere", { method: "PUT" });
      expect(expectRestError(unknown.status, unknown.headers, unknown.text)).toMatchObject({ code: "not_found", message: "no route PUT /api/v1/agent/nowhere" });
      for (const method of ["PUT", "PATCH", "OPTIONS"]) {
        const mcp = await fetchText("/mcp", { method });
        expect([mcp.status, mcp.headers.get("allow")]).toEqual([405, "POST"]);
      }
    });

    it("names a field of the wrong type without the decoder's message", async () => {
      const call = rest(server.url, key);
      const res = await call("POST", "/api/v1/agent/memories", { content: "x", type: "fact", confidence: "high" });
      expect(res.body.error).toMatchObject({ code: "invalid_request", details: { field: "confidence", rule: "type" } });
      expect(res.body.error.message).not.toMatch(/agent\.v1|decode|JSON/);
    });

    it("names a string field holding a lone surrogate with rule lone_surrogate", async () => {
      const res = await fetchText("/api/v1/agent/memories", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"content": "a\\udc00b", "type": "fact"}',
      });
      expect(expectRestError(res.status, res.headers, res.text)).toMatchObject({ details: { field: "content", rule: "lone_surrogate" } });
    });

    it.each([
      ["an empty body", "", "body", "required"],
      ["broken JSON", '{"content": "x', "body", "format"],
      ["a JSON array", "[1, 2]", "body", "type"],
      ["a __proto__ key", '{"content": "x", "type": "fact", "metadata": {"__proto__": {"polluted": 1}}}', "body", "forbidden_key"],
      ["a constructor key holding prototype", '{"content": "x", "type": "fact", "metadata": {"constructor": {"prototype": {}}}}', "body", "forbidden_key"],
    ])("answers %s in the error model without Fastify's wording", async (_name, body, field, rule) => {
      const res = await fetchText("/api/v1/agent/memories", { method: "POST", headers: { "content-type": "application/json" }, body });
      const error = expectRestError(res.status, res.headers, res.text);
      expect(error).toMatchObject({ code: "invalid_request", details: { field, rule } });
      expect(error.message).not.toMatch(/content-type is set to/);
    });

    it.each([["text/plain"], ["text/plain; charset=utf-8"], ["application/x-www-form-urlencoded"]])(
      "answers a JSON body sent as %s with content-type/content_type",
      async (contentType) => {
        const res = await fetchText("/api/v1/agent/memories", { method: "POST", headers: { "content-type": contentType }, body: '{"content": "x", "type": "fact"}' });
        expect(expectRestError(res.status, res.headers, res.text)).toMatchObject({ code: "invalid_request", details: { field: "content-type", rule: "content_type" } });
      },
    );

    it("answers a request whose URL and headers exceed Node's 16 KiB limit in the error model", async () => {
      const res = await h1Raw(server.url, `GET /api/v1/agent/memories/${"a".repeat(20_000)} HTTP/1.1\nHost: test\nAuthorization: Bearer ${key}\n`);
      expect(expectRestError(res.status, new Headers(res.headers), res.body)).toMatchObject({
        code: "invalid_request",
        details: { field: "headers", rule: "max_size" },
      });
    });

    it.each([
      ["both Content-Length and Transfer-Encoding", "Content-Length: 5\nTransfer-Encoding: chunked\n", "0\r\n\r\n"],
      ["a malformed chunk size", "Transfer-Encoding: chunked\n", "zz\r\n{}\r\n0\r\n\r\n"],
      ["a Content-Length that is not a number", "Content-Length: abc\n", "{}"],
    ])("answers a request with %s in the error model", async (_name, framing, body) => {
      const res = await h1Raw(
        server.url,
        `POST /api/v1/agent/memories HTTP/1.1\nHost: test\nAuthorization: Bearer ${key}\nContent-Type: application/json\n${framing}`,
        body,
      );
      expect(expectRestError(res.status, new Headers(res.headers), res.body)).toMatchObject({ code: "invalid_request" });
    });

    it(
      "fails a stalled HTTP/1.1 body after REQUEST_BODY_TIMEOUT_MS and closes the connection",
      async () => {
        const started = Date.now();
        const res = await h1Raw(
          server.url,
          `POST /api/v1/agent/memories HTTP/1.1\nHost: test\nAuthorization: Bearer ${key}\nContent-Type: application/json\nContent-Length: 100\n`,
          '{"content": "x',
        );
        expect(Date.now() - started).toBeGreaterThanOrEqual(bodyTimeoutMs - 50);
        expect(expectRestError(res.status, new Headers(res.headers), res.body)).toMatchObject({
          code: "invalid_request",
          details: { field: "body", rule: "read_timeout" },
        });
      },
      stalledTestTimeout,
    );

    it(
      "fails a stalled HTTP/2 body after REQUEST_BODY_TIMEOUT_MS and closes the stream",
      async () => {
        const res = await h2Request(
          server.url,
          { ":path": "/api/v1/agent/memories", "content-type": "application/json", ...auth },
          Buffer.from('{"content": "x'),
          { keepOpen: true },
        );
        expect(res.closed).toBe(true);
        expect(expectRestError(res.status, res.headers, res.data.toString())).toMatchObject({ details: { rule: "read_timeout" } });
      },
      stalledTestTimeout,
    );
  });

  describe("Connect", () => {
    const connect = (body: string | Uint8Array, headers: Record<string, string>, method = "POST") =>
      fetchText("/agent.v1.MemoryService/GetMemory", { method, headers, ...(method === "POST" ? { body } : {}) });

    it("answers garbage application/proto bytes with invalid_request, not the parser's internal error", async () => {
      const res = await connect(new Uint8Array([0xff, 0xff, 0xff, 0xff]), { "content-type": "application/proto" });
      expect(expectConnectError(res.status, res.text)).toMatchObject({ reason: "invalid_request", metadata: { field: "body", rule: "format" } });
      expect(res.text).not.toMatch(/premature|parse binary/);
      expect(res.headers.get("x-ratelimit-limit")).not.toBeNull();
    });

    it.each([
      ['{"foo": 1}', "foo", "unknown_field"],
      ['{"id": 1}', "id", "type"],
      ['{"id": "mem_x"', "body", "format"],
      ["[]", "body", "type"],
      ['{"id": "mem_\\ud800"}', "id", "lone_surrogate"],
    ])("gives JSON decode errors (%s) an ErrorInfo naming the field", async (body, field, rule) => {
      const res = await connect(body, { "content-type": "application/json" });
      expect(expectConnectError(res.status, res.text)).toMatchObject({ reason: "invalid_request", metadata: { field, rule } });
      expect(res.text).not.toMatch(/agent\.v1/);
    });

    it.each([
      [{ "content-encoding": "identity, gzip" }, "content-encoding", "content_encoding"],
      [{ "content-encoding": "gzip" }, "body", "content_encoding"],
      [{ "connect-timeout-ms": "soon" }, "connect-timeout-ms", "format"],
    ])("answers bad headers %j in the error model", async (headers, field, rule) => {
      const res = await connect('{"id": "mem_x"}', { "content-type": "application/json", ...headers });
      expect(expectConnectError(res.status, res.text)).toMatchObject({ reason: "invalid_request", metadata: { field, rule } });
      expect(res.headers.get("x-ratelimit-limit")).not.toBeNull();
    });

    it("refuses a body that decompresses beyond the size limit with max_size", async () => {
      const bomb = gzipSync(`{"id": "${" ".repeat(5 * 1024 * 1024)}"}`);
      const res = await connect(bomb, { "content-type": "application/json", "content-encoding": "gzip" });
      expect(expectConnectError(res.status, res.text)).toMatchObject({ reason: "invalid_request", metadata: { field: "body", rule: "max_size" } });
    });

    it("accepts a gzip-compressed Connect body", async () => {
      const res = await connect(gzipSync('{"id": "mem_x"}'), { "content-type": "application/json", "content-encoding": "gzip" });
      expect(expectConnectError(res.status, res.text)).toMatchObject({ reason: "not_found" });
    });

    it("answers a GET and an unknown content type in the error model", async () => {
      const get = await connect("", {}, "GET");
      expect(expectConnectError(get.status, get.text)).toMatchObject({ reason: "invalid_request", metadata: { field: "content-type" } });
      const text = await connect("{}", { "content-type": "text/plain" });
      expect(expectConnectError(text.status, text.text)).toMatchObject({ reason: "invalid_request", metadata: { rule: "content_type" } });
    });

    it(
      "fails a stalled Connect body after REQUEST_BODY_TIMEOUT_MS",
      async () => {
        const res = await h1Raw(
          server.url,
          `POST /agent.v1.MemoryService/GetMemory HTTP/1.1\nHost: test\nAuthorization: Bearer ${key}\nContent-Type: application/json\nContent-Length: 100\n`,
          '{"id": "mem',
        );
        expect(expectConnectError(res.status, res.body)).toMatchObject({ reason: "invalid_request", metadata: { rule: "read_timeout" } });
      },
      stalledTestTimeout,
    );
  });

  describe("gRPC and gRPC-Web", () => {
    const message = toBinary(GetMemoryRequestSchema, create(GetMemoryRequestSchema, { id: "mem_x" }));
    const grpcHeaders = (extra: Record<string, string> = {}) => ({
      ":path": "/agent.v1.MemoryService/GetMemory",
      "content-type": "application/grpc",
      te: "trailers",
      ...auth,
      ...extra,
    });
    const statusOf = (res: { headers: http2.IncomingHttpHeaders; trailers: http2.IncomingHttpHeaders }) =>
      res.trailers["grpc-status"] !== undefined ? res.trailers : res.headers;

    it("answers a valid call (the checks let good requests through)", async () => {
      const res = await h2Request(server.url, grpcHeaders(), grpcFrame(message));
      expect(expectGrpcError(statusOf(res))).toMatchObject({ reason: "not_found" });
    });

    it.each([
      ["a length prefix longer than the body", grpcFrame(message, 0, message.length + 100), {}, "framing"],
      ["two messages in a unary call", Buffer.concat([grpcFrame(message), grpcFrame(message)]), {}, "framing"],
      ["garbage protobuf bytes", grpcFrame(new Uint8Array([0xff, 0xff, 0xff, 0xff])), {}, "format"],
      ["a compressed flag without grpc-encoding", grpcFrame(message, 1), {}, "content_encoding"],
      ["an unsupported grpc-encoding", grpcFrame(message), { "grpc-encoding": "zstd" }, "content_encoding"],
      ["a malformed grpc-timeout", grpcFrame(message), { "grpc-timeout": "soon" }, "format"],
      ["a header shorter than 5 bytes", Buffer.from([0, 0]), {}, "framing"],
    ])("answers %s with INVALID_ARGUMENT and ErrorInfo", async (_name, body, headers, rule) => {
      const res = await h2Request(server.url, grpcHeaders(headers), body);
      // In trailers, after the headers, as gRPC clients read a status.
      expect(res.trailers["grpc-status"]).toBe("3");
      const fields = statusOf(res);
      expect(expectGrpcError(fields)).toMatchObject({ grpcStatus: 3, reason: "invalid_request", metadata: { rule } });
      expect(fields["x-ratelimit-limit"] ?? res.headers["x-ratelimit-limit"]).toBeDefined();
    });

    it("answers an unknown application/grpc+ content type with a gRPC status", async () => {
      const res = await h2Request(server.url, grpcHeaders({ "content-type": "application/grpc+nope" }), grpcFrame(message));
      expect(expectGrpcError(statusOf(res))).toMatchObject({ grpcStatus: 3, metadata: { field: "content-type", rule: "content_type" } });
    });

    it(
      "fails a message whose length prefix is never satisfied, on an open stream, after REQUEST_BODY_TIMEOUT_MS",
      async () => {
        const res = await h2Request(server.url, grpcHeaders(), grpcFrame(message, 0, message.length + 100), { keepOpen: true });
        expect(res.closed).toBe(true);
        expect(expectGrpcError(statusOf(res))).toMatchObject({ grpcStatus: 3, metadata: { field: "body", rule: "read_timeout" } });
      },
      stalledTestTimeout,
    );

    it("answers a gRPC-Web framing error in the error model", async () => {
      const res = await fetch(`${server.url}/agent.v1.MemoryService/GetMemory`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/grpc-web+proto" },
        body: grpcFrame(message, 0, 1000),
      });
      await res.arrayBuffer();
      expect(expectGrpcError(Object.fromEntries(res.headers))).toMatchObject({ reason: "invalid_request", metadata: { rule: "framing" } });
    });

    it("does not echo a huge id back in grpc-message", async () => {
      const huge = toBinary(GetMemoryRequestSchema, create(GetMemoryRequestSchema, { id: "mem_" + "x".repeat(100_000) }));
      const res = await h2Request(server.url, grpcHeaders(), grpcFrame(huge));
      const error = expectGrpcError(statusOf(res));
      expect(error.reason).toBe("not_found");
      expect(error.message.length).toBeLessThan(300);
    });
  });
});
