import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryService } from "../../gen/agent/v1/memory_pb.js";
import { grpcClient } from "../support/grpc-client.js";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

type Rest = ReturnType<typeof rest>;
const memories = "/api/v1/agent/memories";

describe.each(backends)("contradictions, shadowing, duplicates and versions (%s)", (backend) => {
  let server: TestServer;
  let agent: Rest;
  let workspace: Rest;

  beforeAll(async () => {
    server = await startTestServer(backend);
    agent = rest(server.url, await server.createKey("acme", "agent-1"));
    workspace = rest(server.url, await server.createKey("acme"));
  });
  afterAll(() => server?.close());

  const createOne = async (body: object, headers: Record<string, string> = {}) => {
    const res = await agent("POST", memories, body, headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  const get = async (id: string) => (await agent("GET", `${memories}/${id}`)).body;
  const rows = async (content: string) =>
    Number((await server.app.db.query<{ n: string }>("select count(*)::text as n from memories where content = $1", [content]))[0]!.n);
  const recall = async (body: object) => {
    await server.app.indexer.drain();
    const res = await agent("POST", "/api/v1/agent/recall", body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };

  it("applies the rules to statements only: memories over 1,000 characters are documents", async () => {
    const padding = Array.from({ length: 200 }, (_, i) => `note${i}`).join(" ");
    const older = await createOne({ memories: [{ content: `${padding} The archive office is in Hamburg`, type: "fact" }] });
    const newer = await createOne({ memories: [{ content: `${padding} The archive office is in Bremen`, type: "fact" }] });
    expect(newer.contradictions).toEqual([]);
    expect((await get(older.ids[0])).state).toBe("active");
  });

  it("shadows the older memory a new one contradicts, reports it, and never modifies it otherwise", async () => {
    const older = await createOne({ content: "The user lives in Berlin", type: "fact", tags: ["home"] });
    const olderId = older.ids[0];
    expect(older.memories[0]).toMatchObject({ state: "active" });
    expect(older.memories[0]).not.toHaveProperty("supersededBy");
    await server.app.indexer.drain();
    const before = await get(olderId);

    const newer = await createOne({ content: "The user lives in Munich", type: "fact" });
    const newerId = newer.ids[0];
    expect(newer.contradictions).toEqual([
      {
        memoryId: newerId,
        conflictsWith: olderId,
        snippet: "The user lives in Berlin",
        score: expect.any(Number),
        reason: "different value: Berlin → Munich",
        shadowed: true,
        rule: "value",
      },
    ]);
    expect(newer.contradictions[0].score).toBeGreaterThan(0.5);
    expect(newer.contradictions[0].score).toBeLessThanOrEqual(1);
    expect(newer.results).toEqual([
      {
        id: newerId,
        supersedes: [olderId],
        outcome: "stored",
        shadowed: [{ memoryId: olderId, rule: "value", reason: "different value: Berlin → Munich", snippet: "The user lives in Berlin" }],
        keptBeside: [],
        summary: `stored; shadowed ${olderId} (different value: Berlin → Munich)`,
      },
    ]);
    // The memory carries the contradictions found for it, as the response lists them.
    expect(newer.memories[0].contradictions).toEqual(newer.contradictions);
    expect(older.memories[0]).not.toHaveProperty("contradictions");

    const after = await get(olderId);
    expect(after).toMatchObject({ state: "shadowed", supersededBy: newerId });
    expect(Date.parse(after.supersededAt)).toBe(Date.parse(newer.memories[0].createdAt));
    const { state, supersededBy, supersededAt, ...unchanged } = after;
    const { state: s0, ...original } = before;
    expect(unchanged).toEqual(original);
    expect(s0).toBe("active");
    expect((await agent("GET", `${memories}/${olderId}/versions`)).body.versions).toHaveLength(1);
  });

  it("does not shadow elaborations, additions or statements about another subject", async () => {
    const base = await createOne({ content: "The user enjoys hiking in the Alps", type: "preference" });
    await server.app.indexer.drain();
    for (const content of [
      "The user enjoys hiking in the Alps, mostly in summer",
      "The user also enjoys cycling",
      "The user's brother enjoys hiking in the Pyrenees",
    ]) {
      const res = await createOne({ content, type: "preference" });
      expect(res.contradictions, content).toEqual([]);
    }
    expect((await get(base.ids[0])).state).toBe("active");
  });

  it("detects contradictions inside one batch, results in request order", async () => {
    const res = await createOne({
      memories: [
        { content: "The staging cluster runs Kubernetes 1.29", type: "fact" },
        { content: "Deploys happen on Tuesdays", type: "directive" },
        { content: "The staging cluster runs Kubernetes 1.31", type: "fact" },
      ],
    });
    const [first, second, third] = res.ids;
    expect(res.results.map((r: { id: string }) => r.id)).toEqual(res.ids);
    expect(res.contradictions).toEqual([
      expect.objectContaining({ memoryId: third, conflictsWith: first, reason: "different number: 1.29 → 1.31" }),
    ]);
    expect(res.memories[0]).toMatchObject({ id: first, state: "shadowed", supersededBy: third });
    expect(res.memories[1].state).toBe("active");
    expect(res.memories.map((m: { contradictions?: unknown }) => m.contradictions)).toEqual([undefined, undefined, res.contradictions]);
    expect(res.results[2].supersedes).toEqual([first]);
    expect((await get(first)).state).toBe("shadowed");
    expect((await get(second)).state).toBe("active");
  });

  it("finds stored memories contradicted anywhere in a large batch (the index is searched ten new memories at a time)", async () => {
    const older = await createOne({
      memories: [
        { content: "The billing service owner is Alice", type: "fact" },
        { content: "The audit log retention is 30 days", type: "fact" },
      ],
    });
    await server.app.indexer.drain();
    const fillers = Array.from({ length: 23 }, (_, i) => ({ content: `Runbook step ${i + 1} restarts worker pool ${i + 1}`, type: "fact" }));
    const res = await createOne({
      memories: [
        ...fillers.slice(0, 12),
        { content: "The billing service owner is Bob", type: "fact" },
        ...fillers.slice(12),
        { content: "The audit log retention is 90 days", type: "fact" },
      ],
    });
    expect(res.contradictions).toEqual([
      expect.objectContaining({ memoryId: res.ids[12], conflictsWith: older.ids[0] }),
      expect.objectContaining({ memoryId: res.ids[24], conflictsWith: older.ids[1] }),
    ]);
  });

  it("restores the older memory when the newer one is deleted, and hands chains on", async () => {
    const a = (await createOne({ content: "The office is on floor 7", type: "fact" })).ids[0];
    const b = (await createOne({ content: "The office is on floor 3", type: "fact" })).ids[0];
    const c = (await createOne({ content: "The office is on floor 5", type: "fact" })).ids[0];
    expect(await get(a)).toMatchObject({ state: "shadowed", supersededBy: b });
    expect(await get(b)).toMatchObject({ state: "shadowed", supersededBy: c });

    // Deleting the head of the chain makes the previous memory current again.
    const deleted = await agent("DELETE", `${memories}/${c}`);
    expect(deleted.body).toEqual({ id: c, versionsDeleted: 1, restored: [b] });
    const restored = await get(b);
    expect(restored.state).toBe("active");
    expect(restored).not.toHaveProperty("supersededBy");
    expect(restored).not.toHaveProperty("supersededAt");
    expect(await get(a)).toMatchObject({ state: "shadowed", supersededBy: b });

    // Deleting a middle link hands what it replaced to what replaced it.
    const d = (await createOne({ content: "The office is on floor 9", type: "fact" })).ids[0];
    expect(await get(b)).toMatchObject({ state: "shadowed", supersededBy: d });
    expect((await agent("DELETE", `${memories}/${b}`)).body.restored).toEqual([]);
    expect(await get(a)).toMatchObject({ state: "shadowed", supersededBy: d });
    expect((await agent("DELETE", `${memories}/${d}`)).body.restored).toEqual([a]);
    expect((await get(a)).state).toBe("active");
  });

  it("shadows memories named in supersedes, which must be visible and writable", async () => {
    const old = (await createOne({ content: "Standup is at the big table", type: "fact" })).ids[0];
    const res = await createOne({ content: "Team rituals moved to the new wiki page", type: "fact", supersedes: [old] });
    expect(res.results[0].supersedes).toEqual([old]);
    expect(res.results[0]).toMatchObject({
      outcome: "stored",
      shadowed: [{ memoryId: old, rule: "explicit", reason: "named in supersedes", snippet: "Standup is at the big table" }],
      summary: `stored; shadowed ${old} (explicit: named in supersedes)`,
    });
    expect(res.contradictions).toEqual([]);
    expect(await get(old)).toMatchObject({ state: "shadowed", supersededBy: res.ids[0] });

    const missing = await agent("POST", memories, { content: "x1", type: "fact", supersedes: ["mem_01jd0000000000000000000000"] });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    const other = rest(server.url, await server.createKey("acme", "agent-2"));
    const foreign = await other("POST", memories, { content: "x2", type: "fact", supersedes: [old] });
    expect(foreign.status).toBe(404);
    const shared = await workspace("POST", memories, { content: "Shared note", type: "fact", containers: ["agent-1", "agent-2"] });
    const readOnly = await agent("POST", memories, { content: "x3", type: "fact", supersedes: [shared.body.ids[0]] });
    expect(readOnly.status).toBe(403);
    expect(readOnly.body.error.code).toBe("forbidden");
    expect(await rows("x3")).toBe(0);
    const both = await agent("POST", memories, { content: "x4", type: "fact", supersedes: [old], memories: [{ content: "y", type: "fact" }] });
    expect(both.body.error.details).toEqual({ field: "memories", rule: "exclusive" });
  });

  it("checks edited content for contradictions; a shadowed memory stays shadowed when edited", async () => {
    const size = (await createOne({ content: "The payments team has 5 engineers", type: "fact" })).ids[0];
    const note = (await createOne({ content: "Payments hiring is paused", type: "fact" })).ids[0];
    const patched = await agent("PATCH", `${memories}/${note}`, { content: "The payments team has 8 engineers" });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: note, version: 2, state: "active" });
    expect(patched.body.contradictions).toEqual([expect.objectContaining({ memoryId: note, conflictsWith: size, reason: "different number: 5 → 8" })]);
    expect(await get(size)).toMatchObject({ state: "shadowed", supersededBy: note });

    const edited = await agent("PATCH", `${memories}/${size}`, { content: "The payments team has 6 engineers" });
    expect(edited.body).toMatchObject({ version: 2, state: "shadowed", supersededBy: note });
    expect(edited.body).not.toHaveProperty("contradictions");
    expect((await get(note)).state).toBe("active");
    expect((await agent("GET", `${memories}/${size}?version=1`)).body).toMatchObject({ content: "The payments team has 5 engineers", state: "shadowed" });
    const bad = await agent("PATCH", `${memories}/${note}`, { supersedes: [size] });
    expect(bad.body.error.details).toEqual({ field: "memory.supersedes", rule: "create_only" });
  });

  it("returns the existing memory for a duplicate instead of storing it again", async () => {
    const first = await createOne({ content: "Carol's pager number is 555-0101", type: "contact" });
    const id = first.ids[0];
    const again = await createOne({ content: "  carols PAGER number is 555 0101! ", type: "contact", tags: ["ignored"] });
    expect(again.ids).toEqual([id]);
    const duplicate = (of: string) => ({ id: of, duplicateOf: of, supersedes: [], outcome: "duplicate", shadowed: [], keptBeside: [], summary: `duplicate of ${of}` });
    expect(again.results).toEqual([duplicate(id)]);
    expect(again.memories[0]).toMatchObject({ id, content: "Carol's pager number is 555-0101", tags: [] });
    expect(again.contradictions).toEqual([]);
    expect(await rows("  carols PAGER number is 555 0101! ")).toBe(0);

    // Another type or another container is another memory.
    const asFact = await createOne({ content: "Carol's pager number is 555-0101", type: "fact" });
    expect(asFact.ids[0]).not.toBe(id);
    const elsewhere = await workspace("POST", memories, { content: "Carol's pager number is 555-0101", type: "contact", containers: ["agent-2"] });
    expect(elsewhere.body.ids[0]).not.toBe(id);

    const batch = await createOne({
      memories: [
        { content: "Dana prefers async updates", type: "preference" },
        { content: "dana prefers async updates.", type: "preference" },
        { content: "Carol's pager number is 555-0101", type: "contact" },
      ],
    });
    expect(batch.ids[1]).toBe(batch.ids[0]);
    expect(batch.results[0]).toMatchObject({ outcome: "stored" });
    expect(batch.results[0]).not.toHaveProperty("duplicateOf");
    expect(batch.results[1]).toEqual(duplicate(batch.ids[0]));
    expect(batch.results[2]).toEqual(duplicate(id));
    expect(batch.memories.map((m: { id: string }) => m.id)).toEqual(batch.ids);
  });

  it("makes retried creates idempotent with the Idempotency-Key header, also under concurrency", async () => {
    const body = { content: "The VPN endpoint is vpn.example.com", type: "bookmark" };
    const first = await createOne(body, { "idempotency-key": "retry-1" });
    await agent("DELETE", `${memories}/${first.ids[0]}`);
    // The retry answers what the first call answered, even though the memory is gone since: no second write.
    const retry = await createOne(body, { "idempotency-key": "retry-1" });
    expect(retry).toEqual(first);
    expect(await rows(body.content)).toBe(0);

    const changed = await agent("POST", memories, { ...body, type: "fact" }, { "idempotency-key": "retry-1" });
    expect(changed.status).toBe(400);
    expect(changed.body.error.details).toEqual({ field: "Idempotency-Key", rule: "reused" });
    const malformed = await agent("POST", memories, body, { "idempotency-key": "é".repeat(3) });
    expect(malformed.body.error.details).toEqual({ field: "Idempotency-Key", rule: "format" });

    const concurrent = { memories: [{ content: "Sprint demo is on Thursday", type: "fact" }, { content: "Demo room is Atlas", type: "fact" }] };
    const answers = await Promise.all(Array.from({ length: 6 }, () => agent("POST", memories, concurrent, { "idempotency-key": "burst-7" })));
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.body).toEqual(answers[0]!.body);
    }
    expect(await rows("Sprint demo is on Thursday")).toBe(1);
    // Keys belong to one API key: another key may use the same value.
    const otherKey = rest(server.url, await server.createKey("acme", "agent-1"));
    const fresh = await otherKey("POST", memories, { content: "Lunch is at noon", type: "fact" }, { "idempotency-key": "burst-7" });
    expect(fresh.status).toBe(200);
    expect(fresh.body.ids[0]).not.toBe(answers[0]!.body.ids[0]);
  });

  it("serves idempotency and contradictions over gRPC and Connect", async () => {
    const key = await server.createKey("acme", "agent-1");
    const grpc = grpcClient(server.url, "MemoryService", key);
    try {
      const request = { content: "The build server runs Ubuntu 22.04", type: "MEMORY_TYPE_FACT" };
      const one = await grpc.call("createMemories", request, { "idempotency-key": "grpc-1" });
      const two = await grpc.call("createMemories", request, { "idempotency-key": "grpc-1" });
      expect(two).toEqual(one);
      expect(await rows(request.content)).toBe(1);
      const connect = createClient(MemoryService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
      const newer = await connect.createMemories(
        { content: "The build server runs Ubuntu 24.04", type: 1 },
        { headers: { authorization: `Bearer ${key}`, "idempotency-key": "connect-1" } },
      );
      expect(newer.contradictions.map((c) => c.conflictsWith)).toEqual([(one.ids as string[])[0]]);
      expect(newer.memories[0]!.contradictions).toEqual(newer.contradictions);
      const older = (await grpc.call("getMemory", { id: (one.ids as string[])[0] })) as { state: string; supersededBy: string };
      expect(older).toMatchObject({ state: "MEMORY_STATE_SHADOWED", supersededBy: newer.ids[0] });
    } finally {
      grpc.close();
    }
  });

  it("recalls without shadowed memories by default, with them on request, and shows what each item superseded", async () => {
    const old = (await createOne({ content: "The user's favourite editor colour scheme is Solarized", type: "preference" })).ids[0];
    const current = (await createOne({ content: "The user's favourite editor colour scheme is Dracula", type: "preference" })).ids[0];
    const query = { query: "favourite editor colour scheme", searchMode: "keyword", limit: 10 };
    const body = await recall(query);
    const ids = body.memories.map((m: { id: string }) => m.id);
    expect(ids).toContain(current);
    expect(ids).not.toContain(old);
    expect(body.receipt.filtered.shadowed).toBe(1);
    const item = body.memories.find((m: { id: string }) => m.id === current);
    expect(item.supersedes).toEqual([
      { memoryId: old, snippet: "The user's favourite editor colour scheme is Solarized", supersededAt: (await get(old)).supersededAt },
    ]);

    const withShadowed = await recall({ ...query, includeShadowed: true });
    const shadowed = withShadowed.memories.find((m: { id: string }) => m.id === old);
    expect(shadowed.why.validityState).toBe("shadowed");
    expect(withShadowed.receipt.filtered.shadowed).toBe(0);
    const trace = await agent("GET", `/api/v1/agent/recall/traces/${body._meta.traceId}`);
    expect(trace.body.candidates.find((c: { id: string }) => c.id === old).outcome).toBe("shadowed");

    // Without receipts an item carries neither why nor supersedes (spec 2.2).
    const noReceipt = await recall({ ...query, includeReceipt: false });
    const bare = noReceipt.memories.find((m: { id: string }) => m.id === current);
    expect(bare).not.toHaveProperty("why");
    expect(bare).not.toHaveProperty("supersedes");
  });

  it("recalls the latest version and keeps earlier ones readable; expired memories leave recall", async () => {
    const id = (await createOne({ content: "The release codename is Falcon", type: "fact" })).ids[0];
    await agent("PATCH", `${memories}/${id}`, { content: "The release codename is Osprey" });
    const versions = (await agent("GET", `${memories}/${id}/versions`)).body.versions;
    expect(versions.map((v: { version: number; content: string }) => [v.version, v.content])).toEqual([
      [1, "The release codename is Falcon"],
      [2, "The release codename is Osprey"],
    ]);
    expect((await agent("GET", `${memories}/${id}?version=1`)).body.content).toBe("The release codename is Falcon");
    const byNew = await recall({ query: "Osprey", searchMode: "keyword" });
    expect(byNew.memories.map((m: { id: string; content: string }) => [m.id, m.content])).toEqual([[id, "The release codename is Osprey"]]);
    expect((await recall({ query: "Falcon", searchMode: "keyword" })).memories).toEqual([]);
    const semantic = await recall({ query: "release codename", searchMode: "semantic", limit: 3 });
    expect(semantic.memories.find((m: { id: string }) => m.id === id)?.content).toBe("The release codename is Osprey");

    const expired = (await createOne({ content: "The hackathon venue is Hall B", type: "fact", validFrom: "2020-01-01", validUntil: "2020-02-01" })).ids[0];
    const now = await recall({ query: "hackathon venue", searchMode: "keyword" });
    expect(now.memories.map((m: { id: string }) => m.id)).not.toContain(expired);
    const kept = await recall({ query: "hackathon venue", searchMode: "keyword", includeExpired: true });
    expect(kept.memories.find((m: { id: string }) => m.id === expired).why.validityState).toBe("expired");
  });
});

describe("contradiction judge (OpenAI-compatible chat API)", () => {
  let server: TestServer;
  let judge: Server;
  let agent: Rest;
  let mode: "agree" | "disagree" | "fail" | "hang" = "agree";
  const requests: Array<{ model: string; messages: Array<{ content: string }> }> = [];

  beforeAll(async () => {
    judge = createServer((req, res) => {
      let raw = "";
      req.on("data", (c) => (raw += c));
      req.on("end", () => {
        const body = JSON.parse(raw);
        requests.push(body);
        if (mode === "hang") return;
        if (mode === "fail") {
          res.writeHead(500).end("boom");
          return;
        }
        const pairs = (body.messages[1].content.match(/^\d+\. OLDER/gm) ?? []).length;
        const verdicts = Array.from({ length: pairs }, (_, i) => ({ pair: i + 1, contradiction: mode === "agree", reason: `judged ${mode}` }));
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: JSON.stringify({ verdicts }) } }] }));
      });
    });
    await new Promise<void>((resolve) => judge.listen(0, "127.0.0.1", resolve));
    const { port } = judge.address() as AddressInfo;
    server = await startTestServer("pglite", {
      CONTRADICTION_JUDGE_URL: `http://127.0.0.1:${port}/v1`,
      CONTRADICTION_JUDGE_MODEL: "judge-model",
      CONTRADICTION_JUDGE_TIMEOUT_MS: "300",
      // The judge failures below are logged as warnings on purpose.
      LOG_LEVEL: "error",
    });
    agent = rest(server.url, await server.createKey("acme", "agent-1"));
  });
  afterAll(async () => {
    await server?.close();
    judge?.closeAllConnections();
    await new Promise((resolve) => judge?.close(resolve));
  });

  const pair = async (older: string, newer: string) => {
    const a = await agent("POST", "/api/v1/agent/memories", { content: older, type: "fact" });
    const b = await agent("POST", "/api/v1/agent/memories", { content: newer, type: "fact" });
    expect(b.status).toBe(200);
    const olderState = (await agent("GET", `/api/v1/agent/memories/${a.body.ids[0]}`)).body.state;
    return { contradictions: b.body.contradictions, olderState, olderId: a.body.ids[0] as string, result: b.body.results[0] };
  };

  it("confirms offline verdicts and reports its reason", async () => {
    mode = "agree";
    const { contradictions, olderState, olderId, result } = await pair("The user lives in Oslo", "The user lives in Bergen");
    expect(contradictions).toEqual([expect.objectContaining({ reason: "judge: judged agree", score: 0.9, rule: "judge" })]);
    expect(result.shadowed).toEqual([{ memoryId: olderId, rule: "judge", reason: "judge: judged agree", snippet: "The user lives in Oslo" }]);
    expect(result.summary).toBe(`stored; shadowed ${olderId} (judge: judged agree)`);
    expect(olderState).toBe("shadowed");
    const last = requests.at(-1)!;
    expect(last.model).toBe("judge-model");
    expect(last.messages[1]!.content).toContain('OLDER: "The user lives in Oslo"');
  });

  it("overrides an offline verdict it disagrees with", async () => {
    mode = "disagree";
    const { contradictions, olderState } = await pair("The cafe opens at 8am", "The cafe opens at 9am");
    expect(contradictions).toEqual([]);
    expect(olderState).toBe("active");
  });

  it.each(["fail", "hang"] as const)("never fails the write when the judge does (%s): the offline verdict stands", async (m) => {
    mode = m;
    const { contradictions, olderState } = await pair(`The ${m} server port is 8080`, `The ${m} server port is 9090`);
    expect(contradictions).toEqual([expect.objectContaining({ reason: "different number: 8080 → 9090", rule: "number" })]);
    expect(olderState).toBe("shadowed");
  });
});

describe.each(backends)("contradictions with memories the index does not have yet (%s)", (backend) => {
  let server: TestServer;
  let agent: Rest;
  beforeAll(async () => {
    // Nothing is indexed: every earlier memory is found through its indexing job or not at all.
    server = await startTestServer(backend, { INDEXER_ENABLED: "false" });
    agent = rest(server.url, await server.createKey("acme", "agent-1"));
  });
  afterAll(() => server?.close());

  const create = async (content: string) => {
    const res = await agent("POST", memories, { content, type: "fact" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };

  it("finds them by the vectors their writes stored, and by words where a write stored none", async () => {
    for (let i = 0; i < 30; i++) await create(`Unrelated note ${i} about the quarterly planning of team ${i}`);
    const older = await create("The user works at Google");
    const newer = await create("The user works at Microsoft");
    expect(newer.contradictions).toEqual([expect.objectContaining({ conflictsWith: older.ids[0], reason: "different value: Google → Microsoft", shadowed: true })]);

    // A write whose embedding failed leaves a job without a vector.
    const unembedded = await create("The user lives in Paris");
    await server.app.db.query("update index_outbox set vector = null where memory_id = $1", [unembedded.ids[0]]);
    const moved = await create("The user lives in Lisbon");
    expect(moved.contradictions).toEqual([expect.objectContaining({ conflictsWith: unembedded.ids[0], reason: "different value: Paris → Lisbon", shadowed: true })]);
    expect(await server.app.vectors.count()).toBe(0);
  });

  it("matches by words a job whose vector is of another length (another model's), not by comparing vectors", async () => {
    // 1,024 numbers whose first 512 are the opposite of the newer memory's vector: compared over the
    // newer vector's length, the older memory would rank last of the pending ones (more than
    // CONTRADICTION_CANDIDATES, 8), and not be a candidate.
    for (let i = 0; i < 10; i++) await create(`Reminder ${i}: water the plants on floor ${i}`);
    const newerText = "The user lives in Oslo";
    const [newerVector] = await server.app.model.embed([newerText]);
    const foreign = new Float32Array(1024);
    newerVector!.forEach((x, i) => (foreign[i] = -x));
    const older = await create("The user lives in Rome");
    await server.app.db.query("update index_outbox set vector = $1 where memory_id = $2", [new Uint8Array(foreign.buffer), older.ids[0]]);
    const newer = await create(newerText);
    expect(newer.contradictions).toEqual([expect.objectContaining({ conflictsWith: older.ids[0], reason: "different value: Rome → Oslo", shadowed: true })]);
  });
});
