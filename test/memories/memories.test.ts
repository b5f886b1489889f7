import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

describe.each(backends)("memories over REST (%s)", (backend) => {
  let server: TestServer;
  let agent: ReturnType<typeof rest>;

  beforeAll(async () => {
    server = await startTestServer(backend);
    agent = rest(server.url, await server.createKey("acme", "agent-1"));
  });
  afterAll(() => server?.close());

  const countMemories = async () =>
    Number((await server.app.db.query<{ n: string }>("select count(*)::text as n from memories"))[0]!.n);

  it("creates one memory from a top-level body and reads it back", async () => {
    const created = await agent("POST", "/api/v1/agent/memories", {
      content: "The user prefers dark mode",
      type: "preference",
      tags: ["ui", "ui"],
      source: "conversation",
      metadata: { app: "editor", level: 3 },
      validUntil: "2099-01-01",
    });
    expect(created.status).toBe(200);
    expect(created.body.ids).toHaveLength(1);
    expect(created.body.contradictions).toEqual([]);
    const id = created.body.ids[0];
    expect(id).toMatch(/^mem_[0-9a-z]{26}$/);

    const got = await agent("GET", `/api/v1/agent/memories/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      id,
      content: "The user prefers dark mode",
      type: "preference",
      containers: ["agent-1"],
      tags: ["ui"],
      source: "conversation",
      metadata: { app: "editor", level: 3 },
      confidence: 0.9,
      version: 1,
      validUntil: "2099-01-01T00:00:00.000Z",
      provenance: { source: "conversation" },
    });
    expect(got.body.provenance.keyId).toMatch(/^key_/);
    // Contradictions belong to write responses, not to a memory read back.
    expect(got.body).not.toHaveProperty("contradictions");
    expect(created.body.memories[0]).not.toHaveProperty("contradictions");
    expect(Date.parse(got.body.validFrom)).toBe(Date.parse(got.body.createdAt));
  });

  it("creates a batch in request order, all or nothing", async () => {
    const before = await countMemories();
    const ok = await agent("POST", "/api/v1/agent/memories", {
      memories: [
        { content: "first", type: "fact" },
        { content: "second", type: "lesson", confidence: 0.4 },
        { content: "third", type: "bookmark" },
      ],
    });
    expect(ok.status).toBe(200);
    expect(ok.body.memories.map((m: { content: string }) => m.content)).toEqual(["first", "second", "third"]);
    expect(ok.body.memories.map((m: { id: string }) => m.id)).toEqual(ok.body.ids);
    expect(ok.body.memories[1].confidence).toBe(0.4);
    expect(await countMemories()).toBe(before + 3);

    const bad = await agent("POST", "/api/v1/agent/memories", {
      memories: [{ content: "would be stored", type: "fact" }, { content: "bad type", type: "opinion" }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "invalid_request", details: { field: "memories[1].type", rule: "enum" } });
    expect(await countMemories()).toBe(before + 3);
  });

  it("rejects batches over the documented maximum", async () => {
    const memories = Array.from({ length: 101 }, (_, i) => ({ content: `m${i}`, type: "fact" }));
    const res = await agent("POST", "/api/v1/agent/memories", { memories });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual({ field: "memories", rule: "max_items" });
  });

  it("asks for a memory or a batch when a create names neither (an empty memories array included)", async () => {
    for (const body of [{}, { memories: [] }]) {
      const res = await agent("POST", "/api/v1/agent/memories", body);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual({ field: "content", rule: "required" });
      expect(res.body.error.message).toBe("content: is required: send one memory's fields, or memories: an array of 1 to 100");
    }
  });

  it.each([
    [{ type: "fact" }, "content", "required"],
    [{ content: "   ", type: "fact" }, "content", "required"],
    [{ content: "x".repeat(16_385), type: "fact" }, "content", "max_length"],
    [{ content: "x" }, "type", "required"],
    [{ content: "x", type: "opinion" }, "type", "enum"],
    [{ content: "x", type: "fact", source: "rumour" }, "source", "enum"],
    [{ content: "x", type: "fact", confidence: 1.5 }, "confidence", "max"],
    [{ content: "x", type: "fact", validFrom: "yesterday" }, "validFrom", "iso8601"],
    [{ content: "x", type: "fact", validFrom: "2026-01-02T00:00:00" }, "validFrom", "iso8601"],
    [{ content: "x", type: "fact", validFrom: "2026-01-02", validUntil: "2026-01-01" }, "validUntil", "after_valid_from"],
    [{ content: "x", type: "fact", containers: ["bad name!"] }, "containers[0]", "format"],
    [{ content: "x", type: "fact", tags: [""] }, "tags[0]", "min_length"],
    [{ content: "x", type: "fact", tags: ["a\r\nb"] }, "tags[0]", "one_line"],
    [{ content: "x", type: "fact", tags: ["a\u2029b"] }, "tags[0]", "one_line"],
    [{ content: "x", type: "fact", metadata: { blob: "y".repeat(17_000) } }, "metadata", "max_size"],
    [{ content: "x", type: "fact", colour: "red" }, "colour", "unknown_field"],
    [{ content: 42, type: "fact" }, "content", "type"],
    [{ content: "x", type: "fact", memories: [{ content: "y", type: "fact" }] }, "memories", "exclusive"],
    [[{ content: "x", type: "fact" }], "body", "type"],
  ])("rejects %j naming %s (%s)", async (body, field, rule) => {
    const res = await agent("POST", "/api/v1/agent/memories", body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect(res.body.error.details).toEqual({ field, rule });
    expect(res.body.error.message).toContain(field);
  });

  it("rejects malformed JSON and oversized bodies with invalid_request", async () => {
    const malformed = await agent("POST", "/api/v1/agent/memories", '{"content": "x",');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe("invalid_request");
    const huge = await agent("POST", "/api/v1/agent/memories", { content: "x".repeat(5 * 1024 * 1024), type: "fact" });
    expect(huge.status).toBe(400);
    expect(huge.body.error.details).toEqual({ field: "body", rule: "max_size" });
  });

  it("updates into a new version, keeps every version, and reads any one", async () => {
    const { body } = await agent("POST", "/api/v1/agent/memories", { content: "Office is in Berlin", type: "fact", tags: ["office"] });
    const id = body.ids[0];
    const patched = await agent("PATCH", `/api/v1/agent/memories/${id}`, { content: "Office is in Munich", validUntil: "2099-12-31T00:00:00Z" });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, content: "Office is in Munich", version: 2, tags: ["office"], type: "fact" });
    expect(Date.parse(patched.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(patched.body.createdAt));

    const cleared = await agent("PATCH", `/api/v1/agent/memories/${id}`, { validUntil: null, tags: [] });
    expect(cleared.status).toBe(200);
    expect(cleared.body.version).toBe(3);
    expect(cleared.body.validUntil).toBeUndefined();
    expect(cleared.body.tags).toEqual([]);

    const versions = await agent("GET", `/api/v1/agent/memories/${id}/versions`);
    expect(versions.status).toBe(200);
    expect(versions.body.versions.map((v: { version: number; content: string }) => [v.version, v.content])).toEqual([
      [1, "Office is in Berlin"],
      [2, "Office is in Munich"],
      [3, "Office is in Munich"],
    ]);
    const v1 = await agent("GET", `/api/v1/agent/memories/${id}?version=1`);
    expect(v1.body).toMatchObject({ content: "Office is in Berlin", version: 1, tags: ["office"] });
    expect((await agent("GET", `/api/v1/agent/memories/${id}?version=9`)).status).toBe(404);
    expect((await agent("GET", `/api/v1/agent/memories/${id}`)).body.version).toBe(3);
  });

  it("validates updates like creates and leaves the memory unchanged on error", async () => {
    const { body } = await agent("POST", "/api/v1/agent/memories", { content: "kept", type: "fact" });
    const id = body.ids[0];
    for (const [patch, field] of [
      [{ content: "" }, "content"],
      [{ type: "opinion" }, "type"],
      [{ validUntil: "2000-01-01" }, "validUntil"],
      [{ nope: 1 }, "nope"],
    ] as const) {
      const res = await agent("PATCH", `/api/v1/agent/memories/${id}`, patch);
      expect(res.status).toBe(400);
      expect(res.body.error.details.field).toBe(field);
    }
    expect((await agent("PATCH", `/api/v1/agent/memories/${id}`, {})).status).toBe(400);
    const after = await agent("GET", `/api/v1/agent/memories/${id}`);
    expect(after.body).toMatchObject({ content: "kept", version: 1 });
  });

  it("deletes a memory with all its versions", async () => {
    const { body } = await agent("POST", "/api/v1/agent/memories", { content: "temporary", type: "fact" });
    const id = body.ids[0];
    await agent("PATCH", `/api/v1/agent/memories/${id}`, { content: "temporary, edited" });
    const deleted = await agent("DELETE", `/api/v1/agent/memories/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id, versionsDeleted: 2, restored: [] });
    for (const path of [`/api/v1/agent/memories/${id}`, `/api/v1/agent/memories/${id}/versions`]) {
      const res = await agent("GET", path);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    expect((await agent("DELETE", `/api/v1/agent/memories/${id}`)).status).toBe(404);
    const rows = await server.app.db.query("select 1 from memory_versions where memory_id = $1", [id]);
    expect(rows).toEqual([]);
  });

  it("answers unknown ids and unknown query parameters with the spec's errors", async () => {
    const missing = await agent("GET", "/api/v1/agent/memories/mem_01jd000000000000000000000");
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: "not_found" });
    const badQuery = await agent("GET", "/api/v1/agent/memories/mem_x?colour=red");
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.error.details).toEqual({ field: "colour", rule: "unknown_field" });
    const badVersion = await agent("GET", "/api/v1/agent/memories/mem_x?version=abc");
    expect(badVersion.body.error.details).toEqual({ field: "version", rule: "type" });
  });
});
