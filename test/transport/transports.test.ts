import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemorySource, MemoryService, MemoryType } from "../../gen/agent/v1/memory_pb.js";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { grpc, grpcClient, type GrpcClient } from "../support/grpc-client.js";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

const protoTypes = "MEMORY_TYPE_FACT, MEMORY_TYPE_LESSON, MEMORY_TYPE_DIRECTIVE, MEMORY_TYPE_PREFERENCE, MEMORY_TYPE_CONTACT, MEMORY_TYPE_BOOKMARK";

describe.each(backends)("every transport serves the same memories (%s)", (backend) => {
  let server: TestServer;
  let key: string;
  let grpcMemories: GrpcClient;

  beforeAll(async () => {
    server = await startTestServer(backend);
    key = await server.createKey("acme", "agent-1");
    grpcMemories = grpcClient(server.url, "MemoryService", key);
  });
  afterAll(async () => {
    grpcMemories?.close();
    await server?.close();
  });

  const transports: Array<[string, (baseUrl: string) => Transport]> = [
    ["connect json", (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1" })],
    ["connect binary over h2c", (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true })],
    ["grpc-web", (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" })],
    ["grpc (connect-node)", (baseUrl) => createGrpcTransport({ baseUrl })],
  ];

  it.each(transports)("creates, reads, updates and deletes over %s", async (_name, makeTransport) => {
    const client = createClient(MemoryService, makeTransport(server.url));
    const headers = { authorization: `Bearer ${key}` };
    const created = await client.createMemories(
      { content: "Deploys happen on Tuesdays", type: MemoryType.DIRECTIVE, metadata: { team: "infra" } },
      { headers },
    );
    const id = created.ids[0]!;
    expect(created.memories[0]).toMatchObject({ id, type: MemoryType.DIRECTIVE, source: MemorySource.DIRECT, version: 1 });

    const viaRest = await rest(server.url, key)("GET", `/api/v1/agent/memories/${id}`);
    expect(viaRest.body).toMatchObject({ id, content: "Deploys happen on Tuesdays", type: "directive", metadata: { team: "infra" } });

    const updated = await client.updateMemory(
      { id, memory: { content: "Deploys happen on Wednesdays" }, updateMask: { paths: ["content"] } },
      { headers },
    );
    expect(updated).toMatchObject({ version: 2, content: "Deploys happen on Wednesdays", type: MemoryType.DIRECTIVE });
    const versions = await client.listMemoryVersions({ id }, { headers });
    expect(versions.versions.map((v) => v.version)).toEqual([1, 2]);
    expect((await client.deleteMemory({ id }, { headers })).versionsDeleted).toBe(2);

    const err = await client.getMemory({ id }, { headers }).catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
    expect((err as ConnectError).findDetails(ErrorInfoSchema)[0]).toMatchObject({ reason: "not_found", domain: "agentmem" });
  });

  it.each(transports)("carries the spec error code for auth and validation failures over %s", async (_name, makeTransport) => {
    const client = createClient(MemoryService, makeTransport(server.url));
    const noKey = await client.getMemory({ id: "mem_x" }).catch((e: unknown) => ConnectError.from(e));
    expect((noKey as ConnectError).code).toBe(Code.Unauthenticated);
    expect((noKey as ConnectError).findDetails(ErrorInfoSchema)[0]?.reason).toBe("auth_failed");

    const invalid = await client
      .createMemories({ content: "no type" }, { headers: { authorization: `Bearer ${key}` } })
      .catch((e: unknown) => ConnectError.from(e));
    expect((invalid as ConnectError).code).toBe(Code.InvalidArgument);
    expect((invalid as ConnectError).findDetails(ErrorInfoSchema)[0]).toMatchObject({
      reason: "invalid_request",
      metadata: { field: "type", rule: "required" },
    });
    // The values this transport accepts: proto names, not REST's.
    expect((invalid as ConnectError).rawMessage).toBe(`type: is required: one of ${protoTypes}`);
  });

  it("checks the key before it decodes the message: a bad key with a malformed message is unauthenticated", async () => {
    const call = (authorization: string) =>
      fetch(`${server.url}/agent.v1.MemoryService/CreateMemories`, { method: "POST", headers: { "content-type": "application/json", authorization }, body: "{" });
    const stranger = await call("Bearer amk_not_a_key");
    expect(stranger.status).toBe(401);
    expect(((await stranger.json()) as { code: string }).code).toBe("unauthenticated");
    const keyed = await call(`Bearer ${key}`);
    expect(keyed.status).toBe(400);
    expect(((await keyed.json()) as { code: string }).code).toBe("invalid_argument");
  });

  it("names enum values in validation messages as each transport spells them", async () => {
    const viaRest = await rest(server.url, key)("POST", "/api/v1/agent/memories", { content: "no type" });
    expect(viaRest.body.error).toMatchObject({ message: "type: is required: one of fact, lesson, directive, preference, contact, bookmark" });

    // Connect JSON with a REST name: refused while decoding, naming the proto names.
    const res = await fetch(`${server.url}/agent.v1.MemoryService/CreateMemories`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ content: "x", type: "fact" }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "invalid_argument", message: `type: must be one of ${protoTypes}` });

    // gRPC with a number no value has: refused by the rules, naming the proto names.
    const recall = grpcClient(server.url, "RecallService", key);
    try {
      const err = (await recall.call("recall", { query: "x", searchMode: 7 }).catch((e: unknown) => e)) as grpc.ServiceError;
      expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(decodeURIComponent(err.details)).toBe("searchMode: must be one of SEARCH_MODE_SEMANTIC, SEARCH_MODE_KEYWORD, SEARCH_MODE_HYBRID");
    } finally {
      recall.close();
    }
  });

  it("serves an independent grpc-js client built from the protos", async () => {
    const created = await grpcMemories.call("createMemories", {
      memories: [
        { content: "Alice leads the data team", type: "MEMORY_TYPE_CONTACT", tags: ["people"] },
        { content: "Runbooks live in the wiki", type: "MEMORY_TYPE_BOOKMARK", confidence: 0.6 },
      ],
    });
    const ids = created.ids as string[];
    expect(ids).toHaveLength(2);
    const got = await grpcMemories.call("getMemory", { id: ids[1] });
    expect(got).toMatchObject({ id: ids[1], content: "Runbooks live in the wiki", type: "MEMORY_TYPE_BOOKMARK", confidence: 0.6, containers: ["agent-1"] });

    const patched = await grpcMemories.call("updateMemory", { id: ids[0], memory: { tags: ["people", "leads"] } });
    expect(patched).toMatchObject({ version: 2, tags: ["people", "leads"], content: "Alice leads the data team" });
    const v1 = await grpcMemories.call("getMemory", { id: ids[0], version: 1 });
    expect(v1).toMatchObject({ version: 1, tags: ["people"] });
  });

  it("returns gRPC status codes with the spec code in grpc-status-details-bin", async () => {
    const err = (await grpcMemories.call("getMemory", { id: "mem_unknown" }).catch((e: unknown) => e)) as grpc.ServiceError;
    expect(err.code).toBe(grpc.status.NOT_FOUND);
    const details = err.metadata.get("grpc-status-details-bin")[0] as Buffer;
    expect(details).toBeInstanceOf(Buffer);
    // google.rpc.Status: field 3 holds Any details; our ErrorInfo's reason is inside.
    expect(details.toString("latin1")).toContain("not_found");

    const forbidden = (await grpcMemories
      .call("createMemories", { content: "x", type: "MEMORY_TYPE_FACT", containers: ["agent-2"] })
      .catch((e: unknown) => e)) as grpc.ServiceError;
    expect(forbidden.code).toBe(grpc.status.PERMISSION_DENIED);

    const badKey = grpcClient(server.url, "MemoryService", "amk_not_a_key");
    const unauthenticated = (await badKey.call("getMemory", { id: "mem_x" }).catch((e: unknown) => e)) as grpc.ServiceError;
    badKey.close();
    expect(unauthenticated.code).toBe(grpc.status.UNAUTHENTICATED);

    // Refused before any RPC runs (the message is over BODY_LIMIT_BYTES, 4 MiB): the status still reaches
    // grpc-js, which reads it only from trailers (it hung when the refusal carried it in the headers).
    const oversized = (await grpcMemories
      .call("createMemories", { content: "x".repeat(5 * 1024 * 1024), type: "MEMORY_TYPE_FACT" })
      .catch((e: unknown) => e)) as grpc.ServiceError;
    expect(oversized.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect((oversized.metadata.get("grpc-status-details-bin")[0] as Buffer).toString("latin1")).toContain("max_size");

    // grpc-message is percent-encoded as gRPC specifies (only non-printable bytes and '%'), so grpc-js,
    // which decodes it with decodeURI, shows each message as written: from the handler, from a refusal
    // before it, and with non-ASCII text.
    expect(unauthenticated.details).toBe("the API key is invalid, revoked or expired");
    expect(oversized.details).toBe("body: is larger than the request size limit");
    const untyped = (await grpcMemories.call("createMemories", { content: "x" }).catch((e: unknown) => e)) as grpc.ServiceError;
    expect(untyped.details).toMatch(/^type: is required: one of MEMORY_TYPE_FACT, /);
    const accented = (await grpcMemories.call("getMemory", { id: "mem_café 100%" }).catch((e: unknown) => e)) as grpc.ServiceError;
    expect(accented.details).toBe("memory mem_café 100% does not exist");
  });

  it("decodes the ErrorInfo detail exactly over Connect's binary error form", async () => {
    const res = await fetch(`${server.url}/agent.v1.MemoryService/GetMemory`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ id: "mem_unknown" }),
    });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { code: string; details: Array<{ type: string; value: string }> };
    expect(body.code).toBe("not_found");
    const info = fromBinary(ErrorInfoSchema, Buffer.from(body.details[0]!.value, "base64"));
    expect(info.reason).toBe("not_found");
  });
});
