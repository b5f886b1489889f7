import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RecallService } from "../../gen/agent/v1/recall_pb.js";
import { grpcClient } from "../support/grpc-client.js";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";
import { indexedIds } from "../support/indexed-ids.js";

type Rest = ReturnType<typeof rest>;

const corpus = [
  { content: "The user prefers dark mode in every editor", type: "preference", tags: ["ui"] },
  { content: "Deploys to production happen on Tuesday mornings", type: "directive", tags: ["ops"], severity: "high" },
  { content: "Alice is the tech lead of the payments team", type: "contact", tags: ["people"] },
  { content: "The build failed with error ZX-4711 when the cache was cold", type: "lesson", tags: ["ops"] },
  { content: "Bob enjoys hiking in the Alps during summer", type: "fact", tags: ["people"], confidence: 0.3 },
  { content: "Our API documentation lives at docs.example.com", type: "bookmark", tags: ["docs"] },
  { content: "The office moved from Berlin to Munich in March", type: "fact", tags: ["office"], severity: "critical" },
  { content: "The staging cluster uses Kubernetes 1.29", type: "fact", tags: ["ops"] },
];

/**
 * A hybrid recall scores a keyword-only hit (one the semantic search's pool of 40 missed) by its cosine
 * with the query, from the vector its keyword search returned: the same similarity a semantic recall
 * reports for it. Forty-five notes about editor themes crowd the ticket out of the semantic pool.
 */
async function keywordOnlyHitKeepsItsCosine(server: TestServer) {
  const agent = rest(server.url, await server.createKey("themes", "notes"));
  const ticket = "Accounting filed ticket ZX-4711 about the quarterly invoices";
  const looks = ["dark", "light", "muted", "pastel", "solarized", "warm", "cool", "minimal", "bright"];
  const tools = ["code", "terminal", "notebook", "browser", "markdown"];
  // Notes that do not replace one another: update detection would shadow "prefers light themes" with "prefers dark themes".
  const notes = looks.flatMap((look) => tools.map((tool) => ({ content: `The user tried ${look} themes in the ${tool} editor`, type: "preference" })));
  const created = await agent("POST", "/api/v1/agent/memories", { memories: [...notes, { content: ticket, type: "fact" }] });
  expect(created.status).toBe(200);
  await server.app.indexer.drain();
  const query = "What look does the user like when editing ZX-4711";
  const semantic = await agent("POST", "/api/v1/agent/recall", { query, searchMode: "semantic", limit: 46 });
  const similarity = semantic.body.memories.find((m: { content: string }) => m.content === ticket).similarity;
  // Outside the 40 a hybrid recall of 10 takes from the semantic search.
  expect(semantic.body.memories.findIndex((m: { content: string }) => m.content === ticket)).toBeGreaterThanOrEqual(40);
  const hybrid = await agent("POST", "/api/v1/agent/recall", { query, searchMode: "hybrid", limit: 10, threshold: 0 });
  const hit = hybrid.body.memories.find((m: { content: string }) => m.content === ticket);
  expect(hit.why.matchedVia).toBe("keyword");
  expect(hit.why.cosine).not.toBe(0);
  expect(hit.why.cosine).toBeCloseTo(similarity, 4);
}

describe.each(backends)("recall (%s)", (backend) => {
  let server: TestServer;
  let agent: Rest;
  let agentAuthorization: string;
  const ids = new Map<string, string>();

  const recall = async (body: object) => {
    const res = await agent("POST", "/api/v1/agent/recall", body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  const contents = (body: { memories: Array<{ content: string }> }) => body.memories.map((m) => m.content);

  beforeAll(async () => {
    server = await startTestServer(backend);
    const agentKey = await server.createKey("acme", "agent-1");
    agent = rest(server.url, agentKey);
    agentAuthorization = `Bearer ${agentKey}`;
    const created = await agent("POST", "/api/v1/agent/memories", { memories: corpus });
    created.body.ids.forEach((id: string, i: number) => ids.set(corpus[i]!.content, id));
    await server.app.indexer.drain();
  });
  afterAll(() => server?.close());

  it("finds a paraphrase semantically", async () => {
    const body = await recall({ query: "which colour theme does the user like?", searchMode: "semantic", limit: 3 });
    expect(contents(body)[0]).toBe(corpus[0]!.content);
    expect(body.memories[0].why.matchedVia).toBe("semantic");
    expect(body.memories[0].similarity).toBeGreaterThan(0.3);
  });

  it("finds exact terms by keyword and reports which words matched", async () => {
    const body = await recall({ query: "ZX-4711 error", searchMode: "keyword" });
    expect(contents(body)).toEqual([corpus[3]!.content]);
    expect(body.memories[0].why.keywordMatches).toEqual(["-4711", "error", "zx"]);
    expect(body.memories[0].why.bm25).toBeGreaterThan(0);
    expect(body.receipt.searchMode).toBe("keyword");
  });

  it("scores a keyword-only hit of a hybrid recall by its cosine", () => keywordOnlyHitKeepsItsCosine(server));

  it("lets a keyword-only hit win in hybrid mode", async () => {
    const body = await recall({ query: "ZX-4711", limit: 3 });
    expect(contents(body)[0]).toBe(corpus[3]!.content);
    expect(["keyword", "hybrid"]).toContain(body.memories[0].why.matchedVia);
  });

  it("answers with exactly the spec's shape, receipt included by default", async () => {
    const body = await recall({ query: "who leads the payments team?" });
    expect(Object.keys(body).sort()).toEqual(["_meta", "memories", "receipt"]);
    const item = body.memories[0];
    expect(item.content).toBe(corpus[2]!.content);
    expect(item).toMatchObject({ id: ids.get(corpus[2]!.content), type: "contact", confidence: 1, containers: ["agent-1"] });
    // With receipts on, supersedes is always a list (spec 2.2): empty when it replaced nothing.
    expect(item.supersedes).toEqual([]);
    expect(typeof item.similarity).toBe("number");
    expect(item).not.toHaveProperty("validUntil");
    expect(Object.keys(item.why).sort()).toEqual(
      ["bm25", "confidenceMultiplier", "cosine", "finalScore", "informativeness", "keywordMatches", "matchedVia", "queryCoverage", "recencyBoost", "relevance", "rerankApplied", "severityMultiplier", "validityState"].sort(),
    );
    const w = item.why;
    expect(w.finalScore).toBeCloseTo(w.relevance * w.recencyBoost * w.severityMultiplier * w.confidenceMultiplier, 10);
    expect(w.informativeness).toBeGreaterThan(0);
    expect(w.informativeness).toBeLessThanOrEqual(1);
    expect(w.queryCoverage).toBeGreaterThan(0);
    expect(w.queryCoverage).toBeLessThanOrEqual(1);
    expect(w.relevance).toBeCloseTo((0.4 * Math.max(0, w.cosine) + 0.6 * (w.bm25 / (w.bm25 + 12)) * (0.5 + 0.5 * w.queryCoverage)) * (0.6 + 0.4 * w.informativeness ** 2), 10);
    expect(w.validityState).toBe("active");
    expect(body.receipt).toMatchObject({
      searchMode: "hybrid",
      threshold: 0,
      rerankApplied: false,
      returned: body.memories.length,
      filtersApplied: { containers: ["agent-1"], types: [], severity: null, minConfidence: 0 },
    });
    expect(body.receipt.candidatesConsidered).toBeGreaterThanOrEqual(body.memories.length);
    expect(Object.keys(body.receipt.filtered).sort()).toEqual(
      ["belowThreshold", "deduplicated", "lowConfidence", "outsideValidityWindow", "overTokenBudget", "shadowed"].sort(),
    );
    expect(body._meta.traceId).toMatch(/^trc_/);
    expect(body._meta.tokens).toBeGreaterThan(0);
    expect(body._meta.totalMs).toBeGreaterThanOrEqual(body._meta.searchMs);
  });

  it("omits receipt and why when the caller opts out", async () => {
    const body = await recall({ query: "office location", includeReceipt: false });
    expect(body).not.toHaveProperty("receipt");
    for (const m of body.memories) expect(m).not.toHaveProperty("why");
    for (const m of body.memories) expect(m).not.toHaveProperty("supersedes");
    expect(body._meta.tokens).toBeGreaterThan(0);
  });

  it("writes every field the spec marks always (and supersedes with receipts) over Connect JSON too", async () => {
    const connectRecall = async (body: object) => {
      const res = await fetch(`${server.url}/agent.v1.RecallService/Recall`, {
        method: "POST",
        headers: { authorization: agentAuthorization, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { memories: Record<string, unknown>[] };
    };
    for (const includeReceipt of [true, false]) {
      const { memories } = await connectRecall({ query: "who leads the payments team?", includeReceipt });
      expect(memories.length).toBeGreaterThan(0);
      for (const item of memories) {
        for (const field of ["id", "content", "type", "similarity", "confidence", "containers"]) expect(item, field).toHaveProperty(field);
        if (includeReceipt) expect(item.supersedes).toEqual([]);
      }
    }
  });

  it("counts tokens of the returned contents with cl100k_base and honours maxTokens", async () => {
    const all = await recall({ query: "team", searchMode: "keyword", limit: 10 });
    expect(all.memories).toHaveLength(1);
    expect(all._meta.tokens).toBe(9); // "Alice is the tech lead of the payments team" in cl100k_base
    const capped = await recall({ query: "ops deploys build cluster", limit: 10, maxTokens: 12 });
    expect(capped._meta.tokens).toBeLessThanOrEqual(12);
    expect(capped.receipt.filtered.overTokenBudget).toBeGreaterThan(0);
  });

  it("filters by types, tags, severity and confidence, and reports what it applied", async () => {
    const typed = await recall({ query: "team people office", types: ["contact"] });
    expect(typed.memories.every((m: { type: string }) => m.type === "contact")).toBe(true);
    expect(typed.receipt.filtersApplied.types).toEqual(["contact"]);

    const tagged = await recall({ query: "anything at all", tags: ["ops"], limit: 10 });
    expect(contents(tagged).sort()).toEqual([corpus[1]!.content, corpus[3]!.content, corpus[7]!.content].sort());

    const severe = await recall({ query: "office deploys", severity: "high", limit: 10 });
    expect(contents(severe).sort()).toEqual([corpus[1]!.content, corpus[6]!.content].sort());
    expect(severe.receipt.filtersApplied.severity).toBe("high");

    const confident = await recall({ query: "Bob hiking in the Alps", minConfidence: 0.5, limit: 10 });
    expect(contents(confident)).not.toContain(corpus[4]!.content);
    expect(confident.receipt.filtered.lowConfidence).toBe(1);
    expect(confident.receipt.filtersApplied.minConfidence).toBe(0.5);
  });

  it("drops results below the threshold and counts them", async () => {
    const body = await recall({ query: "payments team lead", threshold: 0.3, limit: 10 });
    expect(body.memories.every((m: { why: { finalScore: number } }) => m.why.finalScore >= 0.3)).toBe(true);
    expect(body.receipt.filtered.belowThreshold).toBeGreaterThan(0);
    expect(body.receipt.threshold).toBe(0.3);
  });

  it("collapses duplicates that differ only in case and punctuation", async () => {
    // Of different types, so both are stored (the same type would be one memory: see test/memories/contradictions.test.ts).
    const dup = await agent("POST", "/api/v1/agent/memories", {
      memories: [
        { content: "Carol's pager number is 555-0101", type: "contact" },
        { content: "carols pager number is 555 0101!", type: "fact" },
      ],
    });
    await server.app.indexer.drain();
    const body = await recall({ query: "Carol pager number", limit: 5 });
    expect(contents(body).filter((c) => c.toLowerCase().includes("pager"))).toHaveLength(1);
    expect(body.receipt.filtered.deduplicated).toBe(1);
    for (const id of dup.body.ids) await agent("DELETE", `/api/v1/agent/memories/${id}`);
  });

  it("excludes expired memories unless includeExpired, and supports point-in-time recall", async () => {
    const { body: created } = await agent("POST", "/api/v1/agent/memories", {
      content: "The on-call phone is the Nokia 3310",
      type: "fact",
      validFrom: "2020-01-01",
      validUntil: "2021-01-01",
    });
    await server.app.indexer.drain();
    const id = created.ids[0];
    const now = await recall({ query: "on-call phone Nokia", limit: 10 });
    expect(now.memories.map((m: { id: string }) => m.id)).not.toContain(id);
    expect(now.receipt.filtered.outsideValidityWindow).toBeGreaterThanOrEqual(1);

    const withExpired = await recall({ query: "on-call phone Nokia", includeExpired: true, limit: 10 });
    const item = withExpired.memories.find((m: { id: string }) => m.id === id);
    expect(item.why.validityState).toBe("expired");
    expect(item.validUntil).toBe("2021-01-01T00:00:00.000Z");

    const then = await recall({ query: "on-call phone Nokia", validAt: "2020-06-01", limit: 10 });
    expect(then.memories.map((m: { id: string }) => m.id)).toEqual([id]);
  });

  it("filters by creation time", async () => {
    const future = await recall({ query: "team", createdAfter: "2999-01-01" });
    expect(future.memories).toEqual([]);
    const past = await recall({ query: "team", createdBefore: "2000-01-01" });
    expect(past.memories).toEqual([]);
    const now = await recall({ query: "payments team", createdAfter: "2000-01-01", createdBefore: "2999-01-01" });
    expect(contents(now)).toContain(corpus[2]!.content);
  });

  it("never returns deleted or stale memories even when the index lags", async () => {
    const { body } = await agent("POST", "/api/v1/agent/memories", { content: "The coffee machine is on floor 7", type: "fact" });
    await server.app.indexer.drain();
    const id = body.ids[0];
    await server.app.indexer.stop();
    try {
      await agent("PATCH", `/api/v1/agent/memories/${id}`, { content: "The coffee machine is on floor 2" });
      const updated = await recall({ query: "where is the coffee machine", limit: 3 });
      expect(updated.memories.find((m: { id: string }) => m.id === id)?.content).toBe("The coffee machine is on floor 2");
      await agent("DELETE", `/api/v1/agent/memories/${id}`);
      const deleted = await recall({ query: "where is the coffee machine", limit: 10 });
      expect(deleted.memories.map((m: { id: string }) => m.id)).not.toContain(id);
      expect(await indexedIds(server.app.vectors)).toContain(id);
    } finally {
      await server.app.indexer.drain();
    }
    expect(await indexedIds(server.app.vectors)).not.toContain(id);
  });

  it("validates the request, naming the field and rule", async () => {
    for (const [body, field, rule] of [
      [{}, "query", "required"],
      [{ query: "  " }, "query", "required"],
      [{ query: "x", limit: 0 }, "limit", "min"],
      [{ query: "x", limit: 101 }, "limit", "max"],
      [{ query: "x", searchMode: "fuzzy" }, "searchMode", "enum"],
      [{ query: "x", minConfidence: 2 }, "minConfidence", "max"],
      [{ query: "x", types: ["opinion"] }, "types[0]", "enum"],
      [{ query: "x", severity: "extreme" }, "severity", "enum"],
      [{ query: "x", validAt: "noon" }, "validAt", "iso8601"],
      [{ query: "x", createdAfter: "2026-02-01", createdBefore: "2026-02-01" }, "createdBefore", "after_created_after"],
      [{ query: "x", maxTokens: 0 }, "maxTokens", "min"],
      [{ query: "x", colour: "red" }, "colour", "unknown_field"],
    ] as const) {
      const res = await agent("POST", "/api/v1/agent/recall", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ code: "invalid_request", details: { field, rule } });
    }
  });

  it("scopes recall by the key: other containers are forbidden, workspace keys see all", async () => {
    const other = rest(server.url, await server.createKey("acme", "agent-2"));
    await other("POST", "/api/v1/agent/memories", { content: "Agent two keeps its notes in Obsidian", type: "fact" });
    await server.app.indexer.drain();

    const forbidden = await agent("POST", "/api/v1/agent/recall", { query: "notes", containers: ["agent-2"] });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe("forbidden");
    expect(contents(await recall({ query: "Obsidian notes", limit: 10 }))).not.toContain("Agent two keeps its notes in Obsidian");

    const workspace = rest(server.url, await server.createKey("acme"));
    const all = await workspace("POST", "/api/v1/agent/recall", { query: "Obsidian notes", limit: 3 });
    expect(contents(all.body)[0]).toBe("Agent two keeps its notes in Obsidian");
    const one = await workspace("POST", "/api/v1/agent/recall", { query: "Obsidian notes", containers: ["agent-1"], limit: 10 });
    expect(contents(one.body)).not.toContain("Agent two keeps its notes in Obsidian");

    const stranger = rest(server.url, await server.createKey("globex", "agent-1"));
    const empty = await stranger("POST", "/api/v1/agent/recall", { query: "payments team lead" });
    expect(empty.body.memories).toEqual([]);
  });

  it("answers the same over Connect and gRPC as over REST", async () => {
    const key = await server.createKey("acme", "agent-1");
    const request = { query: "who leads the payments team?", limit: 3 };
    const viaRest = await rest(server.url, key)("POST", "/api/v1/agent/recall", request);
    const connect = createClient(RecallService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
    const viaConnect = await connect.recall(request, { headers: { authorization: `Bearer ${key}` } });
    const grpc = grpcClient(server.url, "RecallService", key);
    const viaGrpc = (await grpc.call("recall", request)) as { memories: Array<{ id: string; similarity: number }> };
    grpc.close();
    const restIds = viaRest.body.memories.map((m: { id: string }) => m.id);
    expect(viaConnect.memories.map((m) => m.id)).toEqual(restIds);
    expect(viaGrpc.memories.map((m) => m.id)).toEqual(restIds);
    expect(viaGrpc.memories[0]!.similarity).toBeCloseTo(viaRest.body.memories[0].similarity, 6);
  });

  it("keeps an audit trace of every recall", async () => {
    const body = await recall({ query: "dark mode preference", limit: 2 });
    const trace = await agent("GET", `/api/v1/agent/recall/traces/${body._meta.traceId}`);
    expect(trace.status).toBe(200);
    expect(trace.body).toMatchObject({
      traceId: body._meta.traceId,
      query: "dark mode preference",
      containers: ["agent-1"],
      returnedIds: body.memories.map((m: { id: string }) => m.id),
      receipt: { returned: body.memories.length, searchMode: "hybrid" },
      _meta: { traceId: body._meta.traceId, tokens: body._meta.tokens },
      request: { query: "dark mode preference", limit: 2 },
    });
    expect(trace.body.candidates.length).toBe(body.receipt.candidatesConsidered);
    expect(trace.body.candidates.filter((c: { outcome: string }) => c.outcome === "returned")).toHaveLength(body.memories.length);
    expect((await agent("GET", "/api/v1/agent/recall/traces/trc_01jd0000000000000000000000")).status).toBe(404);
  });
});

describe("recall traces across containers", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("pglite");
  });
  afterAll(() => server?.close());

  it("lists traces newest first with cursor pagination, time filters and container scoping", async () => {
    const one = rest(server.url, await server.createKey("acme", "agent-1"));
    const two = rest(server.url, await server.createKey("acme", "agent-2"));
    const workspace = rest(server.url, await server.createKey("acme"));
    const traceIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await (i % 2 === 0 ? one : two)("POST", "/api/v1/agent/recall", { query: `question ${i}`, searchMode: "keyword" });
      traceIds.push(r.body._meta.traceId);
    }
    const page1 = await workspace("GET", "/api/v1/agent/recall/traces?pageSize=2");
    expect(page1.body.traces.map((t: { traceId: string }) => t.traceId)).toEqual([traceIds[4], traceIds[3]]);
    expect(page1.body.traces[0].candidates).toEqual([]);
    const page2 = await workspace("GET", `/api/v1/agent/recall/traces?pageSize=2&pageToken=${page1.body.nextPageToken}`);
    const page3 = await workspace("GET", `/api/v1/agent/recall/traces?pageSize=2&pageToken=${page2.body.nextPageToken}`);
    expect([...page2.body.traces, ...page3.body.traces].map((t: { traceId: string }) => t.traceId)).toEqual([traceIds[2], traceIds[1], traceIds[0]]);
    expect(page3.body).not.toHaveProperty("nextPageToken");

    const onlyTwo = await workspace("GET", "/api/v1/agent/recall/traces?container=agent-2");
    expect(onlyTwo.body.traces.map((t: { traceId: string }) => t.traceId)).toEqual([traceIds[3], traceIds[1]]);
    const mine = await one("GET", "/api/v1/agent/recall/traces");
    expect(mine.body.traces.map((t: { traceId: string }) => t.traceId)).toEqual([traceIds[4], traceIds[2], traceIds[0]]);
    expect((await one("GET", `/api/v1/agent/recall/traces/${traceIds[1]}`)).status).toBe(404);
    expect((await one("GET", "/api/v1/agent/recall/traces?container=agent-2")).status).toBe(403);
    expect((await workspace("GET", "/api/v1/agent/recall/traces?createdAfter=2999-01-01")).body.traces).toEqual([]);
    expect((await workspace("GET", "/api/v1/agent/recall/traces?pageToken=garbage")).body.error.details).toEqual({ field: "pageToken", rule: "format" });
  });
});

describe("recall with VECTOR_BACKEND=pgvector (PGlite with the vector extension)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("pglite", { VECTOR_BACKEND: "pgvector" });
  });
  afterAll(() => server?.close());

  it("stores vectors in Postgres and answers semantic, keyword and hybrid recalls", async () => {
    expect(server.app.vectors.kind).toBe("pgvector");
    const agent = rest(server.url, await server.createKey("acme", "agent-1"));
    await agent("POST", "/api/v1/agent/memories", { memories: corpus });
    await server.app.indexer.drain();
    expect(await server.app.vectors.count()).toBe(corpus.length);
    for (const searchMode of ["semantic", "hybrid"]) {
      const res = await agent("POST", "/api/v1/agent/recall", { query: "which colour theme does the user like?", searchMode, limit: 3 });
      expect(res.body.memories[0].content).toBe(corpus[0]!.content);
    }
    const keyword = await agent("POST", "/api/v1/agent/recall", { query: "Kubernetes", searchMode: "keyword" });
    expect(keyword.body.memories[0].content).toBe(corpus[7]!.content);
  });

  it("scores a keyword-only hit of a hybrid recall by its cosine", () => keywordOnlyHitKeepsItsCosine(server));
});
