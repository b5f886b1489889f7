import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminKey, backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

// Spec section 5: the tenant (workspace and container) comes from the API key, never from the body.
describe.each(backends)("API key scoping (%s)", (backend) => {
  let server: TestServer;
  let agent1: ReturnType<typeof rest>;
  let agent2: ReturnType<typeof rest>;
  let acme: ReturnType<typeof rest>;
  let globexAgent1: ReturnType<typeof rest>;
  let globex: ReturnType<typeof rest>;

  beforeAll(async () => {
    server = await startTestServer(backend);
    agent1 = rest(server.url, await server.createKey("acme", "agent-1"));
    agent2 = rest(server.url, await server.createKey("acme", "agent-2"));
    acme = rest(server.url, await server.createKey("acme"));
    // Same container name in another workspace: container names must not cross workspaces.
    globexAgent1 = rest(server.url, await server.createKey("globex", "agent-1"));
    globex = rest(server.url, await server.createKey("globex"));
  });
  afterAll(() => server?.close());

  const count = async (sql: string, params: unknown[] = []) =>
    Number((await server.app.db.query<{ n: string }>(`select count(*)::text as n from ${sql}`, params))[0]!.n);
  const countMemories = () => count("memories");
  const countVersions = () => count("memory_versions");
  const countIn = (workspace: string) =>
    count("memories m join workspaces w on w.id = m.workspace_id where w.name = $1", [workspace]);

  const expectError = (res: { status: number; body: any }, status: number, code: string) => {
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
  };

  it("hides another container's memory behind 404, never 403", async () => {
    const created = await agent1("POST", "/api/v1/agent/memories", { content: "agent-1 secret plan", type: "fact" });
    expect(created.status).toBe(200);
    const id = created.body.ids[0];
    expect(created.body.memories[0].containers).toEqual(["agent-1"]);

    const own = await agent1("GET", `/api/v1/agent/memories/${id}`);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id, content: "agent-1 secret plan", containers: ["agent-1"], version: 1 });

    for (const [who, client] of [
      ["acme/agent-2", agent2],
      ["globex/agent-1", globexAgent1],
      ["globex workspace", globex],
    ] as const) {
      for (const [method, path, body] of [
        ["GET", `/api/v1/agent/memories/${id}`, undefined],
        ["GET", `/api/v1/agent/memories/${id}?version=1`, undefined],
        ["GET", `/api/v1/agent/memories/${id}/versions`, undefined],
        ["PATCH", `/api/v1/agent/memories/${id}`, { content: "overwritten" }],
        ["DELETE", `/api/v1/agent/memories/${id}`, undefined],
      ] as const) {
        const res = await client(method, path, body);
        expect({ who, method, path, status: res.status, code: res.body?.error?.code }).toEqual({
          who,
          method,
          path,
          status: 404,
          code: "not_found",
        });
      }
    }

    const byWorkspaceKey = await acme("GET", `/api/v1/agent/memories/${id}`);
    expect(byWorkspaceKey.status).toBe(200);
    expect(byWorkspaceKey.body).toMatchObject({ id, content: "agent-1 secret plan", version: 1 });
    // None of the refused writes happened.
    const after = await agent1("GET", `/api/v1/agent/memories/${id}/versions`);
    expect(after.status).toBe(200);
    expect(after.body.versions.map((v: { content: string }) => v.content)).toEqual(["agent-1 secret plan"]);
  });

  it("lets a container key write only to its own container", async () => {
    const before = await countMemories();
    const other = await agent1("POST", "/api/v1/agent/memories", { content: "x", type: "fact", containers: ["agent-2"] });
    expectError(other, 403, "forbidden");
    const both = await agent1("POST", "/api/v1/agent/memories", {
      content: "x",
      type: "fact",
      containers: ["agent-1", "agent-2"],
    });
    expectError(both, 403, "forbidden");
    expect(await countMemories()).toBe(before);

    const own = await agent1("POST", "/api/v1/agent/memories", { content: "mine", type: "fact", containers: ["agent-1"] });
    expect(own.status).toBe(200);
    expect(own.body.memories[0].containers).toEqual(["agent-1"]);
    expect(await countMemories()).toBe(before + 1);

    // Nor can an update move a memory into another container.
    const id = own.body.ids[0];
    const moved = await agent1("PATCH", `/api/v1/agent/memories/${id}`, { containers: ["agent-2"] });
    expectError(moved, 403, "forbidden");
    expect((await agent1("GET", `/api/v1/agent/memories/${id}`)).body).toMatchObject({ containers: ["agent-1"], version: 1 });
    expectError(await agent2("GET", `/api/v1/agent/memories/${id}`), 404, "not_found");
  });

  it("makes a workspace key name containers, and shares but guards multi-container memories", async () => {
    const missing = await acme("POST", "/api/v1/agent/memories", { content: "shared", type: "fact" });
    expectError(missing, 400, "invalid_request");
    expect(missing.body.error.details).toEqual({ field: "containers", rule: "required" });

    const created = await acme("POST", "/api/v1/agent/memories", {
      content: "shared",
      type: "fact",
      containers: ["agent-1", "agent-2"],
    });
    expect(created.status).toBe(200);
    const id = created.body.ids[0];
    expect(created.body.memories[0].containers).toEqual(["agent-1", "agent-2"]);

    for (const client of [agent1, agent2]) {
      const got = await client("GET", `/api/v1/agent/memories/${id}`);
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({ id, content: "shared", containers: ["agent-1", "agent-2"] });
    }
    expectError(await globexAgent1("GET", `/api/v1/agent/memories/${id}`), 404, "not_found");

    expectError(await agent1("PATCH", `/api/v1/agent/memories/${id}`, { content: "agent-1 edit" }), 403, "forbidden");
    expectError(await agent1("DELETE", `/api/v1/agent/memories/${id}`), 403, "forbidden");
    expectError(await agent2("DELETE", `/api/v1/agent/memories/${id}`), 403, "forbidden");
    expect((await acme("GET", `/api/v1/agent/memories/${id}`)).body).toMatchObject({ content: "shared", version: 1 });

    const patched = await acme("PATCH", `/api/v1/agent/memories/${id}`, { content: "shared, edited" });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, content: "shared, edited", version: 2, containers: ["agent-1", "agent-2"] });
    expect((await agent2("GET", `/api/v1/agent/memories/${id}`)).body).toMatchObject({ content: "shared, edited", version: 2 });
  });

  it("refuses a whole batch when one memory names a foreign container", async () => {
    const memories = await countMemories();
    const versions = await countVersions();
    const res = await agent1("POST", "/api/v1/agent/memories", {
      memories: [
        { content: "fine", type: "fact" },
        { content: "smuggled", type: "fact", containers: ["agent-2"] },
      ],
    });
    expectError(res, 403, "forbidden");
    expect(await countMemories()).toBe(memories);
    expect(await countVersions()).toBe(versions);
    expect(await count("memories where content = any($1)", [["fine", "smuggled"]])).toBe(0);
  });

  it("never takes the tenant from the request body", async () => {
    const inGlobex = await countIn("globex");
    const all = await countMemories();
    const res = await agent1("POST", "/api/v1/agent/memories", { content: "into globex?", type: "fact", workspace: "globex" });
    expectError(res, 400, "invalid_request");
    expect(res.body.error.details).toEqual({ field: "workspace", rule: "unknown_field" });
    const viaWorkspaceKey = await acme("POST", "/api/v1/agent/memories", {
      content: "into globex?",
      type: "fact",
      workspace: "globex",
      containers: ["agent-1"],
    });
    expectError(viaWorkspaceKey, 400, "invalid_request");
    expect(viaWorkspaceKey.body.error.details).toEqual({ field: "workspace", rule: "unknown_field" });
    expect(await countIn("globex")).toBe(inGlobex);
    expect(await countMemories()).toBe(all);
  });

  it("does not let an admin key use the agent API", async () => {
    const admin = rest(server.url, adminKey);
    const before = await countMemories();
    const res = await admin("POST", "/api/v1/agent/memories", { content: "admin note", type: "fact", containers: ["agent-1"] });
    expectError(res, 403, "forbidden");
    expect(await countMemories()).toBe(before);
    expectError(await admin("GET", "/api/v1/agent/memories/mem_01jd000000000000000000000"), 403, "forbidden");
  });
});
