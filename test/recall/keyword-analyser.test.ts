import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { englishStopWords } from "../../src/search/analyser.js";
import { rest, startTestServer, type TestServer } from "../support/test-server.js";

// One analyser scores keyword matches and explains them, on both vector backends: a word that adds to
// bm25 is listed in keywordMatches, and a stop word adds nothing (it did: LanceDB stemmed "does" to
// "doe" before its stop-word filter, and scored it).

const memories = [
  "The user is vegetarian and does not eat fish",
  "The user's sister Lena lives in Hamburg",
  "Deploys to production happen on Tuesday mornings",
  "The build failed with error ZX-4711 when the cache was cold",
  "Alice is the tech lead of the payments team",
  // Every stop word, so that any stop word that reached the index would match this memory.
  `stop words: ${englishStopWords.join(" ")}`,
];

const queries = [
  "where does the user live?",
  "does the user eat fish?",
  "which deploys failed on Tuesday?",
  "ZX-4711 build error",
  "who leads the payments team?",
  "having doing being during before above once why any only very",
];

describe.each([
  ["LanceDB", {}],
  ["pgvector", { VECTOR_BACKEND: "pgvector" }],
])("keyword analyser (%s)", (_name, env) => {
  let server: TestServer;
  let agent: ReturnType<typeof rest>;
  const keyword = async (query: string) => {
    const res = await agent("POST", "/api/v1/agent/recall", { query, searchMode: "keyword", limit: 20 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.memories as Array<{ content: string; why: { bm25: number; keywordMatches: string[] } }>;
  };

  beforeAll(async () => {
    server = await startTestServer("pglite", env);
    agent = rest(server.url, await server.createKey("acme", "agent-1"));
    const created = await agent("POST", "/api/v1/agent/memories", { memories: memories.map((content) => ({ content, type: "fact" })) });
    expect(created.status).toBe(200);
    await server.app.indexer.drain();
  });
  afterAll(() => server?.close());

  it("scores no stop word, in any inflection the stemmer produces", async () => {
    expect(await keyword(englishStopWords.join(" "))).toEqual([]);
    const vegetarian = (await keyword("where does the user live?")).find((m) => m.content === memories[0]);
    expect(vegetarian!.why.keywordMatches).toEqual(["user"]);
    const userOnly = (await keyword("user")).find((m) => m.content === memories[0]);
    expect(vegetarian!.why.bm25).toBeCloseTo(userOnly!.why.bm25, 6);
  });

  it("lists exactly the words that score: the matched words alone give the same bm25", async () => {
    for (const query of queries) {
      for (const m of await keyword(query)) {
        expect(m.why.keywordMatches.length, `${query} / ${m.content}`).toBeGreaterThan(0);
        expect(m.why.keywordMatches).not.toContain("does");
        const again = (await keyword(m.why.keywordMatches.join(" "))).find((x) => x.content === m.content);
        expect(again?.why.bm25, `${query} / ${m.content}`).toBeCloseTo(m.why.bm25, 6);
      }
    }
  });

  it("reports the share of the query's terms each memory holds, stop words not counted", async () => {
    const hybrid = async (query: string) => {
      const res = await agent("POST", "/api/v1/agent/recall", { query, searchMode: "hybrid", limit: 20 });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.memories as Array<{ content: string; why: { queryCoverage: number; keywordMatches: string[]; bm25: number } }>;
    };
    // "where does the user live?" has two terms, user and live.
    const found = await hybrid("where does the user live?");
    expect(found.find((m) => m.content === memories[0])!.why.queryCoverage).toBe(0.5);
    expect(found.find((m) => m.content === memories[1])!.why.queryCoverage).toBe(1);
    for (const m of found) if (m.why.bm25 === 0) expect(m.why.queryCoverage, m.content).toBe(0);
    // Three terms: deploy, fail, tuesday.
    const deploys = await hybrid("which deploys failed on Tuesday?");
    expect(deploys.find((m) => m.content === memories[2])!.why.queryCoverage).toBeCloseTo(2 / 3, 12);
    expect(deploys.find((m) => m.content === memories[3])!.why.queryCoverage).toBeCloseTo(1 / 3, 12);
  });
});
