import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, connectJson, rest, startTestServer, type TestServer } from "../support/test-server.js";

// Recall answers with what is true now even when no update was recorded (detection off here, as for a
// container-scoped key that may not shadow, or an import): of two active memories stating one attribute of
// one entity, the newer never ranks below the older, and a question that asks for an attribute lifts the
// memories that state it of the entity it asks about.

describe.each(backends)("recall answers with the current value (%s)", (backend) => {
  let server: TestServer;
  let agent: ReturnType<typeof rest>;
  let key: string;
  const ids = new Map<string, string>();
  const store = async (content: string, validFrom: string) => {
    const res = await agent("POST", "/api/v1/agent/memories", { content, type: "fact", validFrom });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids.set(content, res.body.ids[0]);
  };
  const recall = async (query: string) => {
    const res = await agent("POST", "/api/v1/agent/recall", { query, limit: 5 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.memories.map((m: { content: string }) => m.content) as string[];
  };

  beforeAll(async () => {
    server = await startTestServer(backend, { CONTRADICTIONS_ENABLED: "false" });
    key = await server.createKey("acme", "profile");
    agent = rest(server.url, key);
    // The older value is stored with words closer to the questions than the newer one.
    await store("The user lives in Berlin and loves where the user lives", "2024-01-10T09:00:00Z");
    await store("The user moved to Munich in May", "2025-05-01T09:00:00Z");
    await store("The user's sister lives in Hamburg", "2025-06-01T09:00:00Z");
    await store("The user writes all of their code in Emacs, the user's editor", "2023-02-01T09:00:00Z");
    await store("The user switched to Helix last week", "2026-03-01T09:00:00Z");
    await store("The user drinks two espressos after lunch", "2024-01-01T09:00:00Z");
    await store("The user's standup notes go to the #daily channel", "2024-01-01T09:00:00Z");
    await server.app.indexer.drain();
  });
  afterAll(() => server?.close());

  it("ranks the newer of two values of one attribute above the older, both active", async () => {
    const where = await recall("where does the user live?");
    expect(where.indexOf("The user moved to Munich in May")).toBeLessThan(where.indexOf("The user lives in Berlin and loves where the user lives"));
    expect(where[0]).toBe("The user moved to Munich in May");
    const editor = await recall("which editor does the user write code in?");
    expect(editor[0]).toBe("The user switched to Helix last week");
  });

  it("lifts only what is stated of the entity asked about: the user's residence is not the sister's", async () => {
    const sister = await recall("where does the user's sister live?");
    expect(sister[0]).toBe("The user's sister lives in Hamburg");
  });

  it("over Connect: the same order", async () => {
    const res = await connectJson(server.url, key)("RecallService", "Recall", { query: "where does the user live?", limit: 5 });
    expect(res.status).toBe(200);
    expect(res.body.memories[0].content).toBe("The user moved to Munich in May");
  });
});
