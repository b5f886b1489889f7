import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

// Natural updates that the rules once missed, through the server: each newer memory shadows
// the older one, on create and on a PATCH that changes a memory's content.

const updates: Array<[older: string, newer: string]> = [
  ["The user is vegetarian and does not eat fish", "The user is no longer vegetarian"],
  ["Priya Raman is the user's manager", "Tom Becker is the user's manager"],
  ["The user drinks coffee every morning", "The user stopped drinking coffee"],
  ["The user works at Finchly", "The user works at Stripe"],
];

/** Twenty short facts about one user, as in the issue, the older side of every update among them. */
const profile = [
  ...updates.map(([older]) => older),
  "The user lives in Berlin",
  "The user is allergic to peanuts",
  "The user's birthday is on 14 March",
  "The user speaks German, English and some Portuguese",
  "The user's partner is called Sam",
  "The user has a beagle named Pixel",
  "The user does not own a car and commutes by bike",
  "The user is training for the Berlin marathon in September",
  "The user's sister Lena lives in Hamburg",
  "The user studied physics at TU Dresden",
  "The user goes to the climbing gym on Tuesdays",
  "The user plays bass guitar in a band on weekends",
  "The user prefers dark mode in every editor",
  "The user prefers meetings before noon",
  "The user likes a window seat on flights",
  "The user drinks green tea in the afternoon",
];

describe.each(backends)("day-one contradictions (%s)", (backend) => {
  let server: TestServer;
  /** A container holding the profile, one memory at a time as an agent learns them; content -> id. */
  const storeProfile = async (container: string) => {
    const agent = rest(server.url, await server.createKey("acme", container));
    const ids = new Map<string, string>();
    for (const content of profile) {
      const res = await agent("POST", "/api/v1/agent/memories", { content, type: "fact" });
      expect(res.body.contradictions, content).toEqual([]);
      ids.set(content, res.body.ids[0]);
    }
    await server.app.indexer.drain();
    return { agent, ids };
  };

  beforeAll(async () => {
    server = await startTestServer(backend);
  });
  afterAll(() => server?.close());

  it("each update shadows exactly the memory it replaces", async () => {
    const { agent, ids } = await storeProfile("profile");
    for (const [older, newer] of updates) {
      const res = await agent("POST", "/api/v1/agent/memories", { content: newer, type: "fact" });
      expect(res.status).toBe(200);
      expect(res.body.results[0].supersedes, newer).toEqual([ids.get(older)]);
      expect(res.body.contradictions, newer).toMatchObject([{ conflictsWith: ids.get(older), shadowed: true }]);
      expect((await agent("GET", `/api/v1/agent/memories/${ids.get(older)}`)).body.state).toBe("shadowed");
      await server.app.indexer.drain();
    }
  });

  it("facts about numbered things stay apart, and an update to one shadows only it", async () => {
    const agent = rest(server.url, await server.createKey("acme", "tickets"));
    const tickets = Array.from({ length: 8 }, (_, i) => `Ticket ${4411 + i} is assigned to Bob`);
    const batch = await agent("POST", "/api/v1/agent/memories", { memories: tickets.map((content) => ({ content, type: "fact" })) });
    expect(batch.status).toBe(200);
    expect(batch.body.contradictions).toEqual([]);
    await server.app.indexer.drain();
    for (const content of ["Order 1234 shipped on May 3", "Order 1235 shipped on May 3"]) {
      expect((await agent("POST", "/api/v1/agent/memories", { content, type: "fact" })).body.contradictions, content).toEqual([]);
      await server.app.indexer.drain();
    }
    const listed = await agent("GET", "/api/v1/agent/memories?pageSize=100");
    expect(listed.body.memories.map((m: { state: string }) => m.state)).toEqual(Array(10).fill("active"));
    const update = await agent("POST", "/api/v1/agent/memories", { content: "Ticket 4413 is assigned to Carol", type: "fact" });
    expect(update.body.results[0].supersedes).toEqual([batch.body.ids[2]]);
  });

  it("a log of what happened keeps every occurrence; a settled event corrected is shadowed", async () => {
    const agent = rest(server.url, await server.createKey("acme", "events"));
    const log = ["The nightly backup failed on May 3", "The nightly backup failed on May 4", "The user had a call with Alice on Monday", "The user had a call with Bob on Monday"];
    for (const content of log) {
      expect((await agent("POST", "/api/v1/agent/memories", { content, type: "fact" })).body.contradictions, content).toEqual([]);
      await server.app.indexer.drain();
    }
    const joined = (await agent("POST", "/api/v1/agent/memories", { content: "Alice joined the team in March", type: "fact" })).body.ids[0];
    await server.app.indexer.drain();
    const corrected = await agent("POST", "/api/v1/agent/memories", { content: "Alice joined the team in April", type: "fact" });
    expect(corrected.body.results[0].supersedes).toEqual([joined]);
    const listed = await agent("GET", "/api/v1/agent/memories?pageSize=100");
    expect(listed.body.memories.filter((m: { state: string }) => m.state === "active")).toHaveLength(log.length + 1);
  });

  it("an edit that changes the employer shadows the memory of the old one", async () => {
    const { agent, ids } = await storeProfile("patch");
    const draft = (await agent("POST", "/api/v1/agent/memories", { content: "The user's employer is to be confirmed", type: "fact" })).body.ids[0];
    await server.app.indexer.drain();
    const patched = await agent("PATCH", `/api/v1/agent/memories/${draft}`, { content: "The user works at Stripe" });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const finchly = ids.get("The user works at Finchly");
    expect(patched.body.contradictions).toMatchObject([{ conflictsWith: finchly, shadowed: true, reason: "different value: Finchly → Stripe" }]);
    expect((await agent("GET", `/api/v1/agent/memories/${finchly}`)).body.state).toBe("shadowed");
  });
});
