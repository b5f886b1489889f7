import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryService } from "../../gen/agent/v1/memory_pb.js";
import { grpcClient } from "../support/grpc-client.js";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

// ListMemories: filters, newest-first keyset pagination and scoping, over REST, Connect and gRPC.

const list = (api: ReturnType<typeof rest>, query: Record<string, string | string[]>) => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
  return api("GET", `/api/v1/agent/memories${params.size ? `?${params}` : ""}`);
};
const ids = (body: { memories: Array<{ id: string }> }) => body.memories.map((m) => m.id);

describe.each(backends)("listing memories (%s)", (backend) => {
  let server: TestServer;
  let workspaceKey: string;
  let agentKey: string;
  let api: ReturnType<typeof rest>;
  const made: Record<string, string> = {};

  beforeAll(async () => {
    server = await startTestServer(backend, { CONTRADICTIONS_ENABLED: "false" });
    workspaceKey = await server.createKey("acme");
    agentKey = await server.createKey("acme", "agent-1");
    api = rest(server.url, workspaceKey);
    const create = async (name: string, body: Record<string, unknown>) => {
      const res = await api("POST", "/api/v1/agent/memories", { type: "fact", containers: ["agent-1"], ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      made[name] = res.body.ids[0];
    };
    // Created one after another, so creation order is a, b, c, d, e, f.
    await create("a", { content: "Atlas deploys on Fridays", tags: ["deploy"], metadata: { project: "atlas", env: { region: "eu", tier: 1 } } });
    await create("b", { content: "Atlas uses Postgres 15", type: "lesson", metadata: { project: "atlas", owners: ["ana", "bo"] } });
    await create("c", { content: "Borealis ships weekly", tags: ["deploy", "release"], metadata: { project: "borealis" } });
    await create("d", { content: "The shared runbook lives in the wiki", containers: ["agent-1", "agent-2"], metadata: { project: "atlas", env: { region: "us" } } });
    await create("e", { content: "Agent two keeps its own notes", containers: ["agent-2"], metadata: { project: "atlas" } });
    await create("f", { content: "Atlas deploys on Thursdays now", supersedes: [made.a], metadata: { project: "atlas", owners: ["ana"] } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("lists newest first, and filters by type, tag, state, container and metadata", async () => {
    expect(ids((await list(api, {})).body)).toEqual([made.f, made.e, made.d, made.c, made.b, made.a]);
    expect(ids((await list(api, { types: ["lesson", "fact"], tags: "release" })).body)).toEqual([made.c]);
    expect(ids((await list(api, { state: "shadowed" })).body)).toEqual([made.a]);
    expect(ids((await list(api, { state: "active", containers: "agent-2" })).body)).toEqual([made.e, made.d]);
    expect(ids((await list(api, { metadata: '{"project":"atlas"}' })).body)).toEqual([made.f, made.e, made.d, made.b, made.a]);
    // Nested key paths and scalars must be equal; an array must be equal, not merely contain the elements.
    expect(ids((await list(api, { metadata: '{"env":{"region":"eu"}}' })).body)).toEqual([made.a]);
    expect(ids((await list(api, { metadata: '{"env":{"tier":1.0},"project":"atlas"}' })).body)).toEqual([made.a]);
    expect(ids((await list(api, { metadata: '{"owners":["ana"]}' })).body)).toEqual([made.f]);
    expect(ids((await list(api, { metadata: '{"owners":["ana","bo"]}' })).body)).toEqual([made.b]);
    expect(ids((await list(api, { metadata: '{"project":"nope"}' })).body)).toEqual([]);
    // The window is after inclusive, before exclusive (two memories may share a millisecond).
    const all: Array<{ id: string; createdAt: string }> = (await list(api, {})).body.memories;
    const [from, to] = [all[4]!.createdAt, all[1]!.createdAt];
    const window = await list(api, { createdAfter: from, createdBefore: to });
    expect(ids(window.body)).toEqual(all.filter((m) => m.createdAt >= from && m.createdAt < to).map((m) => m.id));
    expect(ids(window.body)).toContain(made.b);
  });

  it("pages with opaque tokens, without skipping or repeating a memory", async () => {
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await list(api, { pageSize: "2", ...(token ? { pageToken: token } : {}) });
      expect(page.status).toBe(200);
      seen.push(...ids(page.body));
      token = page.body.nextPageToken;
      pages++;
    } while (token);
    expect(pages).toBe(3);
    expect(seen).toEqual([made.f, made.e, made.d, made.c, made.b, made.a]);
    // A page token keeps working after memories are created before the cursor (keyset, not offset).
    const firstPage = await list(api, { pageSize: "3" });
    await api("POST", "/api/v1/agent/memories", { content: "A memory created between two pages", type: "fact", containers: ["agent-1"] });
    const second = await list(api, { pageSize: "3", pageToken: firstPage.body.nextPageToken });
    expect(ids(second.body)).toEqual([made.c, made.b, made.a]);
    expect(second.body.nextPageToken).toBeUndefined();
  });

  it("is scoped like every read", async () => {
    const agent = rest(server.url, agentKey);
    const seen = ids((await list(agent, { metadata: '{"project":"atlas"}' })).body);
    expect(seen).toEqual([made.f, made.d, made.b, made.a]);
    const refused = await list(agent, { containers: "agent-2" });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "forbidden", details: { container: "agent-2" } });
    const other = rest(server.url, await server.createKey("other-workspace"));
    expect(ids((await list(other, {})).body)).toEqual([]);
  });

  it.each([
    [{ pageSize: "0" }, "pageSize", "min"],
    [{ pageSize: "201" }, "pageSize", "max"],
    [{ pageSize: "ten" }, "pageSize", "type"],
    [{ types: "fiction" }, "types[0]", "enum"],
    [{ state: "gone" }, "state", "enum"],
    [{ metadata: "{project:atlas}" }, "metadata", "json"],
    [{ metadata: '["atlas"]' }, "metadata", "type"],
    [{ pageToken: "not-a-token" }, "pageToken", "format"],
    [{ createdAfter: "yesterday" }, "createdAfter", "iso8601"],
    [{ createdAfter: "2026-02-01", createdBefore: "2026-01-01" }, "createdBefore", "after_created_after"],
    [{ containers: "bad name" }, "containers[0]", "format"],
    [{ colour: "red" }, "colour", "unknown_field"],
  ])("answers 400 for %j naming the field and rule", async (query, field, rule) => {
    const res = await list(api, query as Record<string, string>);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "invalid_request", details: { field, rule } });
  });

  it("refuses a metadata filter naming too many key paths", async () => {
    const wide = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i]));
    const res = await list(api, { metadata: JSON.stringify(wide) });
    expect(res.body.error).toMatchObject({ details: { field: "metadata", rule: "max_items" } });
  });

  it("filters recall by the same metadata containment, and reports the filter in filtersApplied", async () => {
    for (const searchMode of ["semantic", "keyword", "hybrid"]) {
      const res = await api("POST", "/api/v1/agent/recall", { query: "Atlas deploys", searchMode, metadata: { project: "atlas", owners: ["ana"] } });
      expect(res.status).toBe(200);
      expect(res.body.memories.map((m: { id: string }) => m.id)).toEqual([made.f]);
      expect(res.body.receipt.filtersApplied.metadata).toEqual({ project: "atlas", owners: ["ana"] });
    }
    const none = await api("POST", "/api/v1/agent/recall", { query: "Atlas deploys", metadata: { project: "nope" } });
    expect(none.body.memories).toEqual([]);
    expect((await api("POST", "/api/v1/agent/recall", { query: "Atlas" })).body.receipt.filtersApplied.metadata).toEqual({});
    const wide = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i]));
    const refused = await api("POST", "/api/v1/agent/recall", { query: "Atlas", metadata: wide });
    expect(refused.body.error).toMatchObject({ code: "invalid_request", details: { field: "metadata", rule: "max_items" } });
  });

  it("answers the same over Connect and gRPC", async () => {
    const headers = { authorization: `Bearer ${workspaceKey}` };
    const connect = createClient(MemoryService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
    const viaConnect = await connect.listMemories({ metadata: { project: "atlas" }, pageSize: 2 }, { headers });
    expect(viaConnect.memories.map((m) => m.id)).toEqual([made.f, made.e]);
    const next = await connect.listMemories({ metadata: { project: "atlas" }, pageSize: 2, pageToken: viaConnect.nextPageToken! }, { headers });
    expect(next.memories.map((m) => m.id)).toEqual([made.d, made.b]);

    const grpc = grpcClient(server.url, "MemoryService", workspaceKey);
    try {
      const viaGrpc = (await grpc.call("listMemories", {
        metadata: { fields: { env: { structValue: { fields: { region: { stringValue: "us" } } } } } },
        types: ["MEMORY_TYPE_FACT"],
      })) as { memories: Array<{ id: string }> };
      expect(viaGrpc.memories.map((m) => m.id)).toEqual([made.d]);
      await expect(grpc.call("listMemories", { pageSize: 0, pageToken: "x" })).rejects.toMatchObject({ code: 3 });
    } finally {
      grpc.close();
    }
  });
});
