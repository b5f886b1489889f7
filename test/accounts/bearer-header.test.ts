import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerKey } from "../../src/accounts/authenticator.js";
import { loadConfig } from "../../src/config.js";
import { joinRepeatedAuthorization } from "../../src/transport/headers.js";
import { expectGrpcError, grpcFrame, h1Raw, h2Request } from "../support/error-model.js";
import { adminKey, startTestServer, startsProcessesTimeoutMs, type TestServer } from "../support/test-server.js";

// The Authorization header is read in exactly RFC 6750's form, `Bearer <key>` with one space, on every
// transport; every other spelling of a valid key, and a request with two Authorization fields (Node keeps
// only the first in req.headers), is 401 auth_failed / UNAUTHENTICATED.

const malformed = (key: string): Array<[string, string]> => [
  ["two spaces", `Bearer  ${key}`],
  ["a tab", `Bearer\t${key}`],
  ["no space", `Bearer${key}`],
  ["a non-breaking space before the key", `Bearer\u00a0${key}`],
  ["a non-breaking space after the key", `Bearer ${key}\u00a0`],
  ["something after the key", `Bearer ${key} x`],
  ["a second credential", `Bearer ${key}, Bearer ${key}`],
  ["another scheme", `Basic ${key}`],
  ["no key", "Bearer "],
];

describe("the Bearer header form", () => {
  it("accepts the scheme in any case, one space and b64token characters, nothing else", () => {
    expect(bearerKey("Bearer amk_abc-_.~+/==")).toBe("amk_abc-_.~+/==");
    expect(bearerKey("bearer amk_x")).toBe("amk_x");
    expect(bearerKey("BEARER amk_x")).toBe("amk_x");
    for (const [what, value] of malformed("amk_x")) expect(bearerKey(value), what).toBeNull();
    expect(bearerKey("Bearer amk_x=y")).toBeNull();
    expect(bearerKey(null)).toBeNull();
  });

  it("refuses an admin key the header form cannot carry at start", () => {
    expect(() => loadConfig({ AGENTMEM_ADMIN_KEY: "a secret with spaces in it" })).toThrow(/AGENTMEM_ADMIN_KEY/);
    expect(loadConfig({ AGENTMEM_ADMIN_KEY: "k".repeat(32) }).AGENTMEM_ADMIN_KEY).toBe("k".repeat(32));
  });
});

describe("two Authorization fields", () => {
  it("are joined (Node keeps the first in headers, all in rawHeaders), which no Bearer form matches", () => {
    const req = { rawHeaders: ["Host", "x", "Authorization", "Bearer amk_a", "authorization", "Bearer amk_b"], headers: { host: "x", authorization: "Bearer amk_a" } };
    joinRepeatedAuthorization(req);
    expect(req.headers.authorization).toBe("Bearer amk_a, Bearer amk_b");
    expect(bearerKey(req.headers.authorization)).toBeNull();
    const one = { rawHeaders: ["authorization", "Bearer amk_a"], headers: { authorization: "Bearer amk_a" } };
    joinRepeatedAuthorization(one);
    expect(one.headers.authorization).toBe("Bearer amk_a");
  });
});

describe("Authorization over every transport", () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer("pglite");
    key = await server.createKey("acme", "agent-1");
  }, startsProcessesTimeoutMs);
  afterAll(async () => {
    await server?.close();
  });

  const restGet = (authorization: string[]) =>
    h1Raw(server.url, ["GET /api/v1/agent/stats HTTP/1.1", "host: localhost", ...authorization.map((a) => `authorization: ${a}`), "connection: close", ""].join("\n"));

  it("REST over HTTP/1.1: 401 auth_failed for each malformed form and for two Authorization fields; `bearer <key>` works", async () => {
    for (const [what, value] of [...malformed(key), ...malformed(adminKey)]) {
      const res = await restGet([value]);
      expect(res.status, what).toBe(401);
      expect(JSON.parse(res.body), what).toMatchObject({ error: { code: "auth_failed" } });
    }
    for (const pair of [[`Bearer ${key}`, `Bearer ${key}`], [`Bearer ${key}`, "Bearer amk_other"], ["Bearer amk_other", `Bearer ${key}`]]) {
      const res = await restGet(pair);
      expect(res.status, pair.join(" | ")).toBe(401);
      expect(JSON.parse(res.body)).toMatchObject({ error: { code: "auth_failed" } });
    }
    // Two fields on the admin API too.
    const admin = await h1Raw(server.url, ["GET /api/v1/admin/keys HTTP/1.1", "host: localhost", `authorization: Bearer ${adminKey}`, `Authorization: Bearer ${adminKey}`, "connection: close", ""].join("\n"));
    expect(admin.status).toBe(401);

    expect((await restGet([`Bearer ${key}`])).status).toBe(200);
    expect((await restGet([`bearer ${key}`])).status).toBe(200);
    expect((await restGet([`BEARER ${key}`])).status).toBe(200);
  });

  const h2Call = (authorization: string, contentType: "application/grpc" | "application/json") =>
    h2Request(
      server.url,
      {
        ":path": "/agent.v1.StatsService/GetStats",
        "content-type": contentType,
        ...(contentType === "application/grpc" ? { te: "trailers" } : { "connect-protocol-version": "1" }),
        authorization,
      },
      contentType === "application/grpc" ? grpcFrame(new Uint8Array()) : Buffer.from("{}"),
    );

  it("gRPC and Connect over HTTP/2: UNAUTHENTICATED for each malformed form and two authorization fields; `bearer <key>` works", async () => {
    // Node's and grpc-js's HTTP/2 clients refuse to send two authorization fields; the server's handling
    // of them (rawHeaders, as over HTTP/1.1) is checked below on a request object.
    for (const [what, value] of malformed(key)) {
      const grpcAnswer = await h2Call(value, "application/grpc");
      const info = expectGrpcError({ ...grpcAnswer.headers, ...grpcAnswer.trailers });
      expect(info.reason, what).toBe("auth_failed");
      expect(info.grpcStatus, what).toBe(grpc.status.UNAUTHENTICATED);

      const connectAnswer = await h2Call(value, "application/json");
      expect(connectAnswer.status, what).toBe(401);
      expect(JSON.parse(connectAnswer.data.toString("utf8")), what).toMatchObject({ code: "unauthenticated" });
    }
    const ok = await h2Call(`bearer ${key}`, "application/grpc");
    expect(Number(ok.trailers["grpc-status"] ?? ok.headers["grpc-status"])).toBe(0);
    expect((await h2Call(`bearer ${key}`, "application/json")).status).toBe(200);
  });

  it("gRPC through grpc-js: a malformed header is refused, lower-case `bearer` works", async () => {
    const definition = protoLoader.loadSync(["agent/v1/stats.proto"], { includeDirs: ["proto"] });
    const Stats = (grpc.loadPackageDefinition(definition) as any).agent.v1.StatsService;
    const client = new Stats(new URL(server.url).host, grpc.credentials.createInsecure());
    const call = (values: string[]) =>
      new Promise<grpc.ServiceError | null>((resolve) => {
        const metadata = new grpc.Metadata();
        for (const v of values) metadata.add("authorization", v);
        client.GetStats({}, metadata, (err: grpc.ServiceError | null) => resolve(err));
      });
    try {
      expect((await call([`Bearer  ${key}`]))?.code).toBe(grpc.status.UNAUTHENTICATED);
      expect(await call([`bearer ${key}`])).toBeNull();
    } finally {
      client.close();
    }
  });
});
