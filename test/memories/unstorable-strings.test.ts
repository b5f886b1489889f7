import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryService } from "../../gen/agent/v1/memory_pb.js";
import { RecallService } from "../../gen/agent/v1/recall_pb.js";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { grpc, grpcClient } from "../support/grpc-client.js";
import { adminKey, backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

type Rest = ReturnType<typeof rest>;
const memories = "/api/v1/agent/memories";
const nul = "\u0000";
const lone = "\ud800";

describe.each(backends)("strings Postgres cannot store: NUL and lone surrogates (%s)", (backend) => {
  let server: TestServer;
  let key: string;
  let agent: Rest;
  let admin: Rest;
  let existing: string;

  beforeAll(async () => {
    server = await startTestServer(backend);
    key = await server.createKey("strings", "agent-1");
    agent = rest(server.url, key);
    admin = rest(server.url, adminKey);
    const created = await agent("POST", memories, { content: "The deploy window is Tuesday", type: "fact" });
    expect(created.status).toBe(200);
    existing = created.body.ids[0];
  });
  afterAll(() => server?.close());

  const counters = async () => {
    const { memoriesStored, recallsUsed, costUsed } = (await agent("GET", "/api/v1/agent/stats")).body;
    return { memoriesStored, recallsUsed, costUsed };
  };

  const expectRefused = (res: { status: number; body: any }, field: string, rule: string) => {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error).toMatchObject({ code: "invalid_request", details: { field, rule } });
  };

  const restCases: Array<[string, string, string, object | undefined, string, string]> = [
    ["content", "POST", memories, { content: `a${nul}b`, type: "fact" }, "content", "nul_character"],
    ["tags", "POST", memories, { content: "ok", type: "fact", tags: ["fine", `t${nul}`] }, "tags[1]", "nul_character"],
    [
      "a batch's tags",
      "POST",
      memories,
      { memories: [{ content: "ok", type: "fact" }, { content: "ok too", type: "fact", tags: [`t${nul}`] }] },
      "memories[1].tags[0]",
      "nul_character",
    ],
    ["a metadata key", "POST", memories, { content: "ok", type: "fact", metadata: { [`k${nul}`]: 1 } }, "metadata.k\\u0000", "nul_character"],
    ["a metadata key (lone surrogate)", "POST", memories, { content: "ok", type: "fact", metadata: { [`k${lone}`]: 1 } }, "metadata.k\\ud800", "lone_surrogate"],
    ["a metadata value", "POST", memories, { content: "ok", type: "fact", metadata: { someKey: `v${nul}` } }, "metadata.someKey", "nul_character"],
    ["a metadata value (lone low surrogate)", "POST", memories, { content: "ok", type: "fact", metadata: { k: "\ude00x" } }, "metadata.k", "lone_surrogate"],
    ["a metadata value (trailing high surrogate)", "POST", memories, { content: "ok", type: "fact", metadata: { k: "x\ud83d" } }, "metadata.k", "lone_surrogate"],
    [
      "a nested metadata value",
      "POST",
      memories,
      { content: "ok", type: "fact", metadata: { a: { b: ["fine", `x${lone}`] } } },
      "metadata.a.b[1]",
      "lone_surrogate",
    ],
    ["supersedes", "POST", memories, { content: "ok", type: "fact", supersedes: [`mem_${nul}`] }, "supersedes[0]", "nul_character"],
    ["an id in the path", "GET", `${memories}/%00`, undefined, "id", "nul_character"],
    ["an update's content", "PATCH", `${memories}/ID`, { content: `x${nul}` }, "memory.content", "nul_character"],
    ["a recall query", "POST", "/api/v1/agent/recall", { query: `deploy${nul}` }, "query", "nul_character"],
  ];

  it.each(restCases)("REST refuses %s with 400 before anything is counted", async (_, method, path, body, field, rule) => {
    const before = await counters();
    expectRefused(await agent(method, path.replace("ID", existing), body), field, rule);
    expect(await counters()).toEqual(before);
  });

  // protobuf-es itself refuses a lone surrogate in a string field while decoding JSON, before any RPC
  // runs: 400 invalid_request naming the field, with the decoder's rule. Struct contents reach the check.
  it.each([
    ["content", { content: `a${lone}b`, type: "fact" }],
    ["content", { content: "ab\ud83d", type: "fact" }],
    ["tags", { content: "ok", type: "fact", tags: ["\ude00"] }],
  ])("REST refuses a lone surrogate in the string field %s while decoding, counting nothing", async (field, body) => {
    const before = await counters();
    const res = await agent("POST", memories, body);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error).toMatchObject({ code: "invalid_request", details: { field } });
    expect(await counters()).toEqual(before);
  });

  it("REST refuses them in admin key names and admin query parameters", async () => {
    expectRefused(await admin("POST", "/api/v1/admin/keys", { workspace: "strings", name: `n${nul}` }), "name", "nul_character");
    expectRefused(await admin("GET", "/api/v1/admin/keys?workspace=%00"), "workspace", "nul_character");
  });

  it("Connect (JSON) refuses them with invalid_argument naming the field", async () => {
    const transport = createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" });
    const headers = { authorization: `Bearer ${key}` };
    const before = await counters();
    const refusal = async (call: Promise<unknown>) => {
      const err = ConnectError.from(await call.then(() => new Error("accepted"), (e: unknown) => e));
      expect(err.code, err.message).toBe(Code.InvalidArgument);
      return err.findDetails(ErrorInfoSchema)[0];
    };
    const memoriesClient = createClient(MemoryService, transport);
    expect(await refusal(memoriesClient.createMemories({ content: `a${nul}`, type: 1 }, { headers }))).toMatchObject({
      reason: "invalid_request",
      metadata: { field: "content", rule: "nul_character" },
    });
    expect(await refusal(memoriesClient.getMemory({ id: `mem${nul}` }, { headers }))).toMatchObject({ metadata: { field: "id", rule: "nul_character" } });
    const recall = createClient(RecallService, transport);
    expect(await refusal(recall.recall({ query: `q${nul}` }, { headers }))).toMatchObject({ metadata: { field: "query", rule: "nul_character" } });

    // The client would send a lone surrogate as U+FFFD: send Connect JSON as text, with the escape.
    const raw = async (body: string) => {
      const res = await fetch(`${server.url}/agent.v1.MemoryService/CreateMemories`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body,
      });
      return { status: res.status, body: (await res.json()) as { code: string; details?: Array<{ type: string; value: string }> } };
    };
    const refused = await raw(String.raw`{"content": "ok", "type": "MEMORY_TYPE_FACT", "metadata": {"k\ud800": "v"}}`);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("invalid_argument");
    const info = fromBinary(ErrorInfoSchema, Buffer.from(refused.body.details![0]!.value, "base64"));
    expect(info).toMatchObject({ reason: "invalid_request", metadata: { field: "metadata.k\\ud800", rule: "lone_surrogate" } });
    const inString = await raw(String.raw`{"content": "a\ud800", "type": "MEMORY_TYPE_FACT"}`);
    expect(inString.status).toBe(400);
    expect(inString.body.code).toBe("invalid_argument");
    expect(await counters()).toEqual(before);
  });

  it("gRPC refuses NUL in every kind of field with INVALID_ARGUMENT naming the field", async () => {
    const memoriesClient = grpcClient(server.url, "MemoryService", key);
    const recallClient = grpcClient(server.url, "RecallService", key);
    const adminClient = grpcClient(server.url, "AdminService", adminKey);
    try {
      const before = await counters();
      const cases: Array<[ReturnType<typeof grpcClient>, string, object, string]> = [
        [memoriesClient, "createMemories", { content: `a${nul}`, type: "MEMORY_TYPE_FACT" }, "content"],
        [memoriesClient, "createMemories", { content: "ok", type: "MEMORY_TYPE_FACT", tags: [`t${nul}`] }, "tags[0]"],
        [memoriesClient, "createMemories", { content: "ok", type: "MEMORY_TYPE_FACT", metadata: { fields: { [`k${nul}`]: { stringValue: "v" } } } }, "metadata.k\\u0000"],
        [memoriesClient, "createMemories", { content: "ok", type: "MEMORY_TYPE_FACT", metadata: { fields: { k: { stringValue: `v${nul}` } } } }, "metadata.k"],
        [memoriesClient, "createMemories", { content: "ok", type: "MEMORY_TYPE_FACT", supersedes: [`mem${nul}`] }, "supersedes[0]"],
        [memoriesClient, "getMemory", { id: `mem${nul}` }, "id"],
        [recallClient, "recall", { query: `q${nul}` }, "query"],
        [adminClient, "createKey", { workspace: "strings", name: `n${nul}` }, "name"],
        [adminClient, "listKeys", { workspace: `w${nul}` }, "workspace"],
      ];
      for (const [client, method, request, field] of cases) {
        const err = (await client.call(method, request).then(
          () => undefined,
          (e: unknown) => e,
        )) as grpc.ServiceError | undefined;
        expect(err?.code, `${method} ${field}`).toBe(grpc.status.INVALID_ARGUMENT);
        // google.rpc.Status with our ErrorInfo: its metadata holds the field and the rule.
        const details = (err!.metadata.get("grpc-status-details-bin")[0] as Buffer).toString("latin1");
        expect(details).toContain("invalid_request");
        expect(details).toContain("nul_character");
        expect(details).toContain(field);
      }
      expect(await counters()).toEqual(before);
    } finally {
      memoriesClient.close();
      recallClient.close();
      adminClient.close();
    }
  });

  it("still accepts well-formed text, including characters outside the BMP", async () => {
    const content = "Emoji 😀 and CJK 中文 are fine";
    const res = await agent("POST", memories, { content, type: "fact", tags: ["😀"], metadata: { "ключ": "значение 😀" } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await agent("GET", `${memories}/${res.body.ids[0]}`)).body).toMatchObject({ content, tags: ["😀"] });
  });
});
