import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpcClient } from "../support/grpc-client.js";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

type Rest = ReturnType<typeof rest>;
const memories = "/api/v1/agent/memories";
const nearMiss = "similar but no update rule applied";

describe.each(backends)("create receipts (%s)", (backend) => {
  let server: TestServer;
  let containers = 0;

  beforeAll(async () => {
    server = await startTestServer(backend);
  });
  afterAll(() => server?.close());

  /** A key of a container of its own, so detection compares a test's memories with its own only. */
  async function agentIn(workspace = "acme"): Promise<{ key: string; call: Rest; container: string }> {
    const container = `receipts-${++containers}`;
    const key = await server.createKey(workspace, container);
    return { key, call: rest(server.url, key), container };
  }
  const create = async (call: Rest, body: object, headers: Record<string, string> = {}) => {
    const res = await call("POST", memories, body, headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };

  describe("receipts", () => {
    it("a contradiction: stored, and the shadowed memory with its rule, reason and snippet", async () => {
      const { call } = await agentIn();
      const older = (await create(call, { content: "The user lives in Lisbon", type: "fact" })).ids[0];
      const res = await create(call, { content: "The user lives in Porto", type: "fact" });
      const id = res.ids[0];
      expect(res.results).toEqual([
        {
          id,
          supersedes: [older],
          outcome: "stored",
          shadowed: [{ memoryId: older, rule: "value", reason: "different value: Lisbon → Porto", snippet: "The user lives in Lisbon" }],
          keptBeside: [],
          summary: `stored; shadowed ${older} (different value: Lisbon → Porto)`,
        },
      ]);
      expect(res.contradictions).toEqual([expect.objectContaining({ memoryId: id, conflictsWith: older, rule: "value", shadowed: true })]);
      expect(res).not.toHaveProperty("dryRun");
      expect((await call("GET", `${memories}/${older}`)).body).toMatchObject({ state: "shadowed", supersededBy: id });
    });

    it("a duplicate: nothing stored, the existing memory named", async () => {
      const { call } = await agentIn();
      const first = (await create(call, { content: "The wiki lives at wiki.example.com", type: "bookmark" })).ids[0];
      const res = await create(call, { content: "the wiki lives at wiki.example.com!", type: "bookmark" });
      expect(res.results).toEqual([{ id: first, duplicateOf: first, supersedes: [], outcome: "duplicate", shadowed: [], keptBeside: [], summary: `duplicate of ${first}` }]);
    });

    it("explicit supersedes: shadowed with rule explicit", async () => {
      const { call } = await agentIn();
      const old = (await create(call, { content: "Expense reports go to Maria", type: "directive" })).ids[0];
      const res = await create(call, { content: "Finance now uses the new reimbursement portal", type: "directive", supersedes: [old] });
      expect(res.results[0]).toEqual({
        id: res.ids[0],
        supersedes: [old],
        outcome: "stored",
        shadowed: [{ memoryId: old, rule: "explicit", reason: "named in supersedes", snippet: "Expense reports go to Maria" }],
        keptBeside: [],
        summary: `stored; shadowed ${old} (explicit: named in supersedes)`,
      });
    });

    it("a near miss: kept beside the similar older memory, which stays active", async () => {
      const { call } = await agentIn();
      // Cosine 0.89 with the built-in model, and no rule fires: an addition ("also").
      const older = (await create(call, { content: "The user drinks green tea every morning", type: "preference" })).ids[0];
      const res = await create(call, { content: "The user also drinks black tea every morning", type: "preference" });
      expect(res.contradictions).toEqual([]);
      expect(res.results).toEqual([
        {
          id: res.ids[0],
          supersedes: [],
          outcome: "stored",
          shadowed: [],
          keptBeside: [{ memoryId: older, snippet: "The user drinks green tea every morning", reason: nearMiss }],
          summary: `stored; kept beside ${older} (${nearMiss})`,
        },
      ]);
      expect((await call("GET", `${memories}/${older}`)).body.state).toBe("active");
    });

    it("a contradiction the key may not shadow: reported, and the older memory kept beside", async () => {
      const { call, container } = await agentIn();
      const workspace = rest(server.url, await server.createKey("acme"));
      const shared = await workspace("POST", memories, { content: "The user's gym is FitHub", type: "fact", containers: [container, "elsewhere"] });
      const older = shared.body.ids[0];
      const res = await create(call, { content: "The user's gym is IronWorks", type: "fact" });
      expect(res.contradictions).toEqual([expect.objectContaining({ conflictsWith: older, shadowed: false, rule: "value" })]);
      const reason = `different value: FitHub → IronWorks (not shadowed: it also lives in a container this key cannot write)`;
      expect(res.results[0]).toMatchObject({
        supersedes: [],
        outcome: "stored",
        shadowed: [],
        keptBeside: [{ memoryId: older, snippet: "The user's gym is FitHub", reason }],
        summary: `stored; kept beside ${older} (${reason})`,
      });
    });

    it("over Connect JSON and gRPC as over REST, with each transport's enum names", async () => {
      const { key, call } = await agentIn();
      const older = (await create(call, { content: "The user works at Google", type: "fact" })).ids[0];
      const shadowed = [{ memoryId: older, rule: "value", reason: "different value: Google → Microsoft", snippet: "The user works at Google" }];
      const summary = `stored; shadowed ${older} (different value: Google → Microsoft)`;

      // gRPC first; then the same write over Connect JSON, a duplicate.
      const connect = async (body: object) => {
        const res = await fetch(`${server.url}/agent.v1.MemoryService/CreateMemories`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
          body: JSON.stringify(body),
        });
        expect(res.status).toBe(200);
        return (await res.json()) as any;
      };
      const grpcMemories = grpcClient(server.url, "MemoryService", key);
      try {
        const created = (await grpcMemories.call("createMemories", { content: "The user works at Microsoft", type: "MEMORY_TYPE_FACT" })) as any;
        expect(created.results).toEqual([expect.objectContaining({ id: created.ids[0], supersedes: [older], outcome: "CREATE_OUTCOME_STORED", shadowed, keptBeside: [], summary })]);
        expect(created.contradictions).toEqual([expect.objectContaining({ conflictsWith: older, rule: "value", shadowed: true })]);
        const again = (await grpcMemories.call("createMemories", { content: "The user works at Microsoft", type: "MEMORY_TYPE_FACT" })) as any;
        expect(again.results).toEqual([
          expect.objectContaining({ id: created.ids[0], duplicateOf: created.ids[0], outcome: "CREATE_OUTCOME_DUPLICATE", summary: `duplicate of ${created.ids[0]}` }),
        ]);
        const tea = (await grpcMemories.call("createMemories", { content: "The user drinks green tea every morning", type: "MEMORY_TYPE_PREFERENCE" })) as any;
        const more = (await grpcMemories.call("createMemories", { content: "The user also drinks black tea every morning", type: "MEMORY_TYPE_PREFERENCE" })) as any;
        expect(more.results[0].keptBeside).toEqual([{ memoryId: tea.ids[0], snippet: "The user drinks green tea every morning", reason: nearMiss }]);
      } finally {
        grpcMemories.close();
      }
      // Connect JSON leaves out empty lists.
      const viaConnect = await connect({ content: "The user works at Microsoft", type: "MEMORY_TYPE_FACT" });
      const id = viaConnect.ids[0];
      expect(viaConnect.results).toEqual([{ id, duplicateOf: id, outcome: "CREATE_OUTCOME_DUPLICATE", summary: `duplicate of ${id}` }]);
    });
  });
});
