import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpc, grpcClient } from "../support/grpc-client.js";
import { adminKey, backends, connectJson, rest, startTestServer, type TestServer } from "../support/test-server.js";
import { planEnv } from "../usage/limits-env.js";

type Rest = ReturnType<typeof rest>;
const memories = "/api/v1/agent/memories";
/** The detector reads "also" as an addition: the older memory stays beside the new one, with why. */
const nearMiss = "an addition (\"also\"): drink of the user";
const times = new Set(["createdAt", "updatedAt", "validFrom", "supersededAt"]);

/** A create response with the given ids (new memories') replaced by placeholders and its timestamps blanked. */
function normalised(body: unknown, ids: readonly string[]): unknown {
  let json = JSON.stringify(body);
  ids.forEach((id, i) => (json = json.replaceAll(id, `new-${i}`)));
  return JSON.parse(json, (key, value) => (times.has(key) ? "time" : value));
}

describe.each(backends)("create receipts and dry runs (%s)", (backend) => {
  let server: TestServer;
  let containers = 0;

  beforeAll(async () => {
    server = await startTestServer(backend, planEnv);
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
  const count = async (sql: string, params: unknown[] = []) => (await server.app.db.query<{ n: number }>(sql, params))[0]!.n;
  const lastJob = async () => Number((await server.app.db.query<{ seq: string }>("select coalesce(max(seq), 0)::text as seq from index_outbox"))[0]!.seq);

  /** What a write could change for a key: its list, its stats, stored rows, indexing jobs and idempotency keys. */
  async function footprint(call: Rest, sinceJob: number) {
    const workspaceRows = (table: string) => count(`select count(*)::int as n from ${table} t join workspaces w on w.id = t.workspace_id where w.name = 'acme'`);
    return {
      list: (await call("GET", `${memories}?pageSize=200`)).body,
      stats: (await call("GET", "/api/v1/agent/stats")).body,
      memories: await workspaceRows("memories"),
      jobs: await count("select count(*)::int as n from index_outbox where seq > $1", [sinceJob]),
      idempotencyKeys: await workspaceRows("idempotency_keys"),
    };
  }

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
      // Cosine 0.89 with the built-in model; the detector reads "also" as an addition.
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

    it("a doubt without a judge: kept beside, saying what was not decided", async () => {
      const { call } = await agentIn();
      // A shared topic and a change, at cosine 0.46: no rule settles it, and no judge is configured.
      const older = (await create(call, { content: "Ticket tracker of the ingestion team: Jira.", type: "fact" })).ids[0];
      const res = await create(call, { content: "Ingestion team tickets have been fully migrated to Linear.", type: "fact" });
      expect(res.contradictions).toEqual([]);
      expect(res.results[0].keptBeside).toEqual([
        { memoryId: older, snippet: "Ticket tracker of the ingestion team: Jira.", reason: 'maybe an update, not decided: ticket, ingestion changed ("migrated"): now linear' },
      ]);
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

      // Connect JSON (a dry run, so the same write can be sent again): every field written, as REST writes them.
      const viaConnectJson = connectJson(server.url, key);
      const connect = async (body: object) => {
        const res = await viaConnectJson("MemoryService", "CreateMemories", body);
        expect(res.status).toBe(200);
        return res.body;
      };
      const viaConnect = await connect({ content: "The user works at Microsoft", type: "MEMORY_TYPE_FACT", dryRun: true });
      expect(viaConnect.dryRun).toBe(true);
      expect(viaConnect.results).toEqual([{ id: viaConnect.ids[0], supersedes: [older], outcome: "CREATE_OUTCOME_STORED", shadowed, keptBeside: [], summary }]);
      expect(viaConnect.contradictions).toEqual([expect.objectContaining({ conflictsWith: older, rule: "value", shadowed: true })]);

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
      const viaConnectDuplicate = await connect({ content: "The user works at Microsoft", type: "MEMORY_TYPE_FACT" });
      expect(viaConnectDuplicate.results[0]).toMatchObject({ outcome: "CREATE_OUTCOME_DUPLICATE" });
    });
  });

  describe("dry runs", () => {
    it("answer what a single create would, and store, shadow, index and count nothing", async () => {
      const { call } = await agentIn();
      const older = (await create(call, { content: "The user lives in Oslo", type: "fact" })).ids[0];
      await server.app.indexer.drain();
      const since = await lastJob();
      const before = await footprint(call, since);

      const body = { content: "The user lives in Bergen", type: "fact", tags: ["home"] };
      const dry = await create(call, { ...body, dryRun: true });
      const provisional = dry.ids[0];
      expect(dry.dryRun).toBe(true);
      expect(provisional).toMatch(/^mem_/);
      expect(dry.results).toEqual([
        {
          id: provisional,
          supersedes: [older],
          outcome: "stored",
          shadowed: [{ memoryId: older, rule: "value", reason: "different value: Oslo → Bergen", snippet: "The user lives in Oslo" }],
          keptBeside: [],
          summary: `stored; shadowed ${older} (different value: Oslo → Bergen)`,
        },
      ]);
      expect(dry.memories).toEqual([expect.objectContaining({ id: provisional, content: body.content, tags: ["home"], version: 1, state: "active" })]);
      expect(dry.contradictions).toEqual([expect.objectContaining({ memoryId: provisional, conflictsWith: older, shadowed: true, rule: "value" })]);

      expect(await footprint(call, since)).toEqual(before);
      expect((await call("GET", `${memories}/${provisional}`)).status).toBe(404);
      const olderNow = (await call("GET", `${memories}/${older}`)).body;
      expect(olderNow.state).toBe("active");
      expect(olderNow).not.toHaveProperty("supersededBy");

      // The real create answers the same, with its own id.
      const real = await create(call, body);
      expect(real).not.toHaveProperty("dryRun");
      expect(real.ids[0]).not.toBe(provisional);
      const { dryRun, ...receipt } = dry;
      expect(normalised(real, real.ids)).toEqual(normalised(receipt, dry.ids));
      expect((await call("GET", `${memories}/${older}`)).body.state).toBe("shadowed");
    });

    it("answer what a batch would: duplicates, contradictions with stored and batch memories, explicit supersedes", async () => {
      const { call } = await agentIn();
      const [cluster, train, room] = (
        await create(call, {
          memories: [
            { content: "The staging cluster runs Kubernetes 1.29", type: "fact" },
            { content: "The release train leaves on Thursdays", type: "fact" },
            { content: "Standups happen in the blue room", type: "fact" },
          ],
        })
      ).ids;
      await server.app.indexer.drain();
      const since = await lastJob();
      const before = await footprint(call, since);

      const batch = {
        memories: [
          { content: "The staging cluster runs Kubernetes 1.31", type: "fact" },
          { content: "the release train leaves on thursdays.", type: "fact" },
          { content: "Our database runs Postgres 15", type: "fact" },
          { content: "Our database runs Postgres 16", type: "fact" },
          { content: "Team rituals are described on the wiki", type: "fact", supersedes: [room] },
        ],
      };
      const dry = await create(call, { ...batch, dryRun: true });
      expect(dry.dryRun).toBe(true);
      expect(dry.ids[1]).toBe(train);
      expect(dry.results.map((r: { outcome: string }) => r.outcome)).toEqual(["stored", "duplicate", "stored", "stored", "stored"]);
      expect(dry.results[0].shadowed).toEqual([expect.objectContaining({ memoryId: cluster, rule: "number" })]);
      expect(dry.results[3].shadowed).toEqual([expect.objectContaining({ memoryId: dry.ids[2], rule: "number", snippet: "Our database runs Postgres 15" })]);
      expect(dry.memories[2]).toMatchObject({ state: "shadowed", supersededBy: dry.ids[3] });
      expect(dry.results[4].shadowed).toEqual([{ memoryId: room, rule: "explicit", reason: "named in supersedes", snippet: "Standups happen in the blue room" }]);

      expect(await footprint(call, since)).toEqual(before);
      for (const i of [0, 2, 3, 4]) expect((await call("GET", `${memories}/${dry.ids[i]}`)).status).toBe(404);
      for (const id of [cluster, room]) expect((await call("GET", `${memories}/${id}`)).body.state).toBe("active");

      const real = await create(call, batch);
      const { dryRun, ...receipt } = dry;
      const fresh = (ids: string[]) => ids.filter((_, i) => i !== 1);
      expect(normalised(real, fresh(real.ids))).toEqual(normalised(receipt, fresh(dry.ids)));
    });

    it("check the Idempotency-Key's format, then ignore it: the real create can use the same key", async () => {
      const { call } = await agentIn();
      const body = { content: "The on-call rota changes on Mondays", type: "fact" };
      const key = { "idempotency-key": "dry-then-real" };
      const dry = await create(call, { ...body, dryRun: true }, key);
      expect(dry.dryRun).toBe(true);
      expect(await count("select count(*)::int as n from idempotency_keys where idempotency_key = $1", [key["idempotency-key"]])).toBe(0);

      const real = await create(call, body, key);
      expect(real).not.toHaveProperty("dryRun");
      expect(real.ids[0]).not.toBe(dry.ids[0]);
      expect((await call("GET", `${memories}/${real.ids[0]}`)).status).toBe(200);
      // A dry run with a used key neither replays its response nor fails as a reused key.
      const after = await create(call, { ...body, dryRun: true }, key);
      expect(after).toMatchObject({ dryRun: true, results: [{ outcome: "duplicate", duplicateOf: real.ids[0] }] });
      expect(await create(call, body, key)).toEqual(real);

      const malformed = await call("POST", memories, { ...body, dryRun: true }, { "idempotency-key": "é" });
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.details).toEqual({ field: "Idempotency-Key", rule: "format" });
    });

    it("fail validation exactly as a real create", async () => {
      const { call } = await agentIn();
      for (const body of [
        { content: "x", type: "opinion" },
        { memories: [{ content: " ", type: "fact" }] },
        { content: "x", type: "fact", supersedes: ["mem_01jd0000000000000000000000"] },
        { content: "x", type: "fact", memories: [{ content: "y", type: "fact" }] },
        { content: "x", type: "fact", containers: ["elsewhere"] },
      ]) {
        const real = await call("POST", memories, body);
        const dry = await call("POST", memories, { ...body, dryRun: true });
        expect(real.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
        expect({ status: dry.status, body: dry.body }).toEqual({ status: real.status, body: real.body });
      }
      const alone = await call("POST", memories, { dryRun: true });
      expect(alone.body.error.details).toEqual({ field: "content", rule: "required" });
      const notBool = await call("POST", memories, { content: "x", type: "fact", dryRun: "yes" });
      expect(notBool.status).toBe(400);
      expect(notBool.body.error.details).toMatchObject({ field: "dryRun" });
    });

    it("are neither charged nor refused by the plan's caps", async () => {
      const workspace = `receipts-small-${backend}`;
      const { call } = await agentIn(workspace);
      expect((await rest(server.url, adminKey)("PUT", `/api/v1/admin/workspaces/${workspace}/plan`, { plan: "small" })).status).toBe(200);
      await create(call, { memories: ["one", "two", "three", "four", "five"].map((w) => ({ content: `Note number ${w}`, type: "fact" })) });
      const refused = await call("POST", memories, { content: "Note number six", type: "fact" });
      expect(refused.status).toBe(429);
      const stats = (await call("GET", "/api/v1/agent/stats")).body;
      const dry = await create(call, { content: "Note number six", type: "fact", dryRun: true });
      expect(dry).toMatchObject({ dryRun: true, results: [{ outcome: "stored" }] });
      expect((await call("GET", "/api/v1/agent/stats")).body).toEqual(stats);
      expect(stats).toMatchObject({ memoriesStored: 5 });
    });

    it("over gRPC: nothing stored, the older memory stays active", async () => {
      const { key, call } = await agentIn();
      const older = (await create(call, { content: "The team's retro is on Fridays", type: "fact" })).ids[0];
      const client = grpcClient(server.url, "MemoryService", key);
      try {
        const dry = (await client.call("createMemories", { memories: [{ content: "The team's retro is on Wednesdays", type: "MEMORY_TYPE_FACT" }], dryRun: true })) as any;
        expect(dry.dryRun).toBe(true);
        expect(dry.results).toEqual([expect.objectContaining({ outcome: "CREATE_OUTCOME_STORED", supersedes: [older], shadowed: [expect.objectContaining({ memoryId: older, rule: "date" })] })]);
        const missing = (await client.call("getMemory", { id: dry.ids[0] }).catch((e: unknown) => e)) as grpc.ServiceError;
        expect(missing.code).toBe(grpc.status.NOT_FOUND);
        expect(await client.call("getMemory", { id: older })).toMatchObject({ state: "MEMORY_STATE_ACTIVE" });
      } finally {
        client.close();
      }
    });
  });
});
