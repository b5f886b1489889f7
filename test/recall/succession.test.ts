import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

// A recall that finds a shadowed memory scores the memories that replaced it, along the chain of
// replacements (up to three steps), within the request's scope and filters.
describe.each(backends)("recall follows chains of replacements (%s)", (backend) => {
  let server: TestServer;
  let agent: ReturnType<typeof rest>;
  const ids: string[] = [];

  const remember = async (content: string, extra: object = {}) => {
    const res = await agent("POST", "/api/v1/agent/memories", { content, type: "fact", ...extra });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids.push(res.body.ids[0]);
    return res.body.ids[0] as string;
  };
  /** Keyword recall for "kitchen": only the first memory of the chain contains the word. */
  const recallKitchen = async (key: ReturnType<typeof rest>, extra: object = {}) => {
    const res = await key("POST", "/api/v1/agent/recall", { query: "kitchen", searchMode: "keyword", includeReceipt: true, ...extra });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.memories as Array<{ id: string; why: { inheritedFrom?: string } }>;
  };

  beforeAll(async () => {
    server = await startTestServer(backend);
    agent = rest(server.url, await server.createKey("acme"));
    const first = await remember("Pixel the beagle sleeps in the kitchen", { containers: ["home"] });
    const second = await remember("Pixel now sleeps in the hallway", { containers: ["home"], supersedes: [first] });
    await remember("Pixel sleeps upstairs these days", { containers: ["home"], supersedes: [second] });
    await server.app.indexer.drain();
  });
  afterAll(() => server?.close());

  it("returns the end of a chain two replacements long, with the relevance of the memory found", async () => {
    const [first, , third] = ids;
    const found = await recallKitchen(agent);
    expect(found.map((m) => m.id)).toEqual([third]);
    expect(found[0]!.why.inheritedFrom).toBe(first);
  });

  it("goes a third step, and stops where a replacement fails the filters or lies outside the key's scope", async () => {
    const [first, , third] = ids;
    const fourth = await remember("Pixel sleeps in the garden house", { type: "preference", containers: ["garden"], supersedes: [third] });
    const found = await recallKitchen(agent);
    expect(found.map((m) => m.id)).toEqual([fourth]);
    expect(found[0]!.why.inheritedFrom).toBe(first);
    // Filtered out by type, the fourth ends the chain; the rest of it is shadowed.
    expect(await recallKitchen(agent, { types: ["fact"] })).toEqual([]);
    // A key of the home container cannot see the fourth.
    expect(await recallKitchen(rest(server.url, await server.createKey("acme", "home")))).toEqual([]);
  });
});
