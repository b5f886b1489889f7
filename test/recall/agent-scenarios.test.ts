import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

// Everyday agent questions, through the server: after a contradiction the current memory ranks
// first, an exact identifier wins in hybrid, and every item says when it was made and what it carries.

const facts = [
  "The user lives in Berlin",
  "Priya Raman is the user's manager",
  "The user is allergic to peanuts",
  "The user is vegetarian and does not eat fish",
  "The user's birthday is on 14 March",
  "The user works at Finchly as a backend engineer",
  "The user speaks German, English and some Portuguese",
  "The user's partner is called Sam",
  "The user has a beagle named Pixel",
  "The user does not own a car and commutes by bike",
  "The user's working hours are 9:00 to 17:30 Central European Time",
  "The user is training for the Berlin marathon in September",
  "The user's sister Lena lives in Hamburg",
  "The user studied physics at TU Dresden",
  "The user's work laptop is a 14-inch MacBook Pro",
  "The user drinks coffee every morning",
  "The user goes to the climbing gym on Tuesdays and Thursdays",
  "The user plays bass guitar in a band on weekends",
  "The user's flat is on the fourth floor of a building without a lift",
  "The user prefers dark mode in every editor",
  "The user prefers meetings before noon",
  "The user likes a window seat on flights",
  "The user wants summaries as bullet points",
  "The user listens to lo-fi music while coding",
  "The user prefers trains over flights for trips under 600 km",
  "Ticket PAY-2291: refunds over 10,000 EUR were rounded wrongly; fixed by using integer cents",
  "Ticket PAY-2219: webhook signatures failed after the key rotation",
  "Error E1403 from the payment gateway means the merchant id is wrong in staging",
  "Error E1430 from the payment gateway means the card was declined; do not retry it",
];

describe.each(backends)("agent scenarios (%s)", (backend) => {
  let server: TestServer;
  let agent: ReturnType<typeof rest>;
  const ids = new Map<string, string>();
  const recall = async (body: object) => {
    const res = await agent("POST", "/api/v1/agent/recall", body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    server = await startTestServer(backend);
    agent = rest(server.url, await server.createKey("acme", "agent-1"));
    // One at a time, as an agent learns them.
    for (const content of facts) {
      const res = await agent("POST", "/api/v1/agent/memories", { content, type: "fact", tags: ["profile"], metadata: { n: facts.indexOf(content) } });
      expect(res.status).toBe(200);
      ids.set(content, res.body.ids[0]);
    }
    await server.app.indexer.drain();
  });
  afterAll(() => server?.close());

  it("ranks the memory that replaced a contradicted one first", async () => {
    const moved = await agent("POST", "/api/v1/agent/memories", { content: "The user moved to Munich", type: "fact" });
    expect(moved.body.results[0].supersedes).toEqual([ids.get("The user lives in Berlin")]);
    await server.app.indexer.drain();
    const body = await recall({ query: "where does the user live?" });
    expect(body.memories[0].content).toBe("The user moved to Munich");
    expect(body.memories[0].why.inheritedFrom).toBe(ids.get("The user lives in Berlin"));
    expect(body.memories.map((m: { content: string }) => m.content)).not.toContain("The user lives in Berlin");
    // Also when the successor is not yet indexed: it is read from Postgres, not from the index.
    const moved2 = await agent("POST", "/api/v1/agent/memories", { content: "The user's partner is called Alex", type: "fact" });
    expect(moved2.body.results[0].supersedes).toEqual([ids.get("The user's partner is called Sam")]);
    await server.app.indexer.drain();
    expect((await recall({ query: "what is the name of the user's partner?" })).memories[0].content).toBe("The user's partner is called Alex");
  });

  it("ranks the memory with an exact identifier first in hybrid, against near misses", async () => {
    for (const [query, want] of [
      ["PAY-2291", facts[25]],
      ["what was PAY-2219 about?", facts[26]],
      ["E1430", facts[28]],
      ["what does error E1403 mean?", facts[27]],
    ] as const) {
      const body = await recall({ query });
      expect(body.memories[0].content, query).toBe(want);
    }
  });

  it("gives every item its creation time, validity start, tags and metadata, with receipts or without", async () => {
    for (const includeReceipt of [true, false]) {
      const body = await recall({ query: "peanut allergy", includeReceipt, limit: 1 });
      const item = body.memories[0];
      expect(item.content).toBe("The user is allergic to peanuts");
      const stored = (await agent("GET", `/api/v1/agent/memories/${item.id}`)).body;
      expect(item).toMatchObject({ createdAt: stored.createdAt, validFrom: stored.validFrom, tags: ["profile"], metadata: { n: 2 } });
      expect(item.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect("why" in item).toBe(includeReceipt);
    }
  });
});
