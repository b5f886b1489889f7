import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

// The index filters by metadata as it does by tags (each memory's metadata terms, src/memories/metadata-terms.ts):
// a metadata filter selecting the same memories as a tag must return the same memories in the same order.

const people = ["Alice", "Bob", "Carol", "Dmitri", "Elena", "Farid", "Grace", "Hiroshi", "Ines", "Jamal", "Kenji", "Lena", "Mateo", "Nadia", "Oliver", "Priya", "Quentin", "Rosa", "Sven", "Tamara"];
const topics = "billing churn hiring latency outages pricing refunds security signups storage support travel uptime vendors budgets audits backups caching compliance costs dashboards deploys docs errors forecasts incidents licences migrations onboarding roadmaps tooling".split(" ");
const places = ["Berlin", "Munich", "Lisbon", "Madrid", "Paris", "London", "Dublin", "Amsterdam", "Oslo", "Vienna", "Zurich", "Milan", "Rome", "Athens", "Tokyo", "Seoul", "Toronto"];
// Any two memories differ in at least two of the three slots (20, 31 and 17 are coprime and 192 < 340),
// so none contradicts another.
const memories = Array.from({ length: 192 }, (_, i) => ({
  content: `${people[i % 20]} presented the quarterly report on ${topics[(i * 7) % 31]} at the ${places[(i * 3) % 17]} office`,
  type: "fact",
  ...(i % 16 === 5 ? { tags: ["sampled"], metadata: { batch: "sampled" } } : { metadata: { batch: "rest" } }),
}));
const sampled = memories.filter((m) => m.metadata.batch === "sampled").length;

describe.each(backends)("recall with a metadata filter (%s)", (backend) => {
  let server: TestServer;
  let agent: ReturnType<typeof rest>;

  beforeAll(async () => {
    server = await startTestServer(backend);
    agent = rest(server.url, await server.createKey("acme", "agent-1"));
    for (let i = 0; i < memories.length; i += 100) {
      const res = await agent("POST", "/api/v1/agent/memories", { memories: memories.slice(i, i + 100) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    await server.app.indexer.drain();
  });
  afterAll(() => server?.close());

  it.each(["hybrid", "semantic", "keyword"])("returns limit matches, best first, in %s mode", async (searchMode) => {
    expect(sampled).toBe(12);
    const recall = async (filter: object) => {
      const res = await agent("POST", "/api/v1/agent/recall", { query: "quarterly report on security", searchMode, limit: 8, ...filter });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.memories as Array<{ id: string; metadata: { batch: string } }>;
    };
    const filtered = await recall({ metadata: { batch: "sampled" } });
    // The same memories selected by a tag, which the index filters exactly.
    const exact = await recall({ tags: ["sampled"] });
    expect(exact).toHaveLength(8);
    expect(filtered.map((m) => m.metadata.batch)).toEqual(Array(8).fill("sampled"));
    expect(filtered.map((m) => m.id)).toEqual(exact.map((m) => m.id));
  });
});
