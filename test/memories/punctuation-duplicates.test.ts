import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rehashContentWithoutWordsSql } from "../../src/db/migrations.js";
import { contentHash } from "../../src/memories/content-hash.js";
import { duplicateKey } from "../../src/recall/scoring.js";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

const memories = "/api/v1/agent/memories";

describe("duplicate keys of contents without letters or digits", () => {
  it("never collapse distinct contents to the empty key", () => {
    expect(duplicateKey("???")).toBe("???");
    expect(duplicateKey("  !!! ")).toBe("!!!");
    expect(duplicateKey("???")).not.toBe(duplicateKey("!!!"));
    expect(contentHash("???")).not.toBe(contentHash("!!!"));
    expect(duplicateKey("Hello, World!")).toBe("hello world");
  });
});

describe.each(backends)("punctuation-only content (%s)", (backend) => {
  let server: TestServer;
  let agent: ReturnType<typeof rest>;

  beforeAll(async () => {
    server = await startTestServer(backend);
    agent = rest(server.url, await server.createKey("punctuation", "agent-1"));
  });
  afterAll(() => server?.close());

  const create = async (content: string) => {
    const res = await agent("POST", memories, { content, type: "fact" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };

  it("stores '???' and '!!!' as two memories, and '???' twice as one", async () => {
    const question = await create("???");
    const bang = await create("!!!");
    expect(bang.ids[0]).not.toBe(question.ids[0]);
    expect(bang.results[0]).not.toHaveProperty("duplicateOf");
    const again = await create("???");
    expect(again.results[0]).toMatchObject({ id: question.ids[0], duplicateOf: question.ids[0] });

    // Recall's de-duplication uses the same key: both come back.
    await server.app.indexer.drain();
    const recalled = await agent("POST", "/api/v1/agent/recall", { query: "what?", searchMode: "semantic", limit: 50 });
    expect(recalled.status).toBe(200);
    const ids = recalled.body.memories.map((m: { id: string }) => m.id);
    expect(ids).toEqual(expect.arrayContaining([question.ids[0], bang.ids[0]]));
  });

  it("migration SQL recomputes stored hashes of the empty key exactly as contentHash does", async () => {
    const contents = ["???", " !!! ", "\t…\u00a0", "—\u3000", "?!\n", "😀😀", "a normal sentence"];
    const other = rest(server.url, await server.createKey("punctuation", "agent-2"));
    const ids: string[] = [];
    for (const content of contents) {
      const res = await other("POST", memories, { content, type: "fact" });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ids.push(res.body.ids[0]);
    }
    const emptyKeyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    // What rows written before the fix hold: the hash of "" for every content without a letter or digit.
    await server.app.db.query("update memories set content_hash = $1 where id = any($2::text[]) and id <> $3", [emptyKeyHash, ids, ids.at(-1)]);
    await server.app.db.query(rehashContentWithoutWordsSql);
    const rows = await server.app.db.query<{ content: string; content_hash: string }>(
      "select content, content_hash from memories where id = any($1::text[])",
      [ids],
    );
    expect(rows).toHaveLength(contents.length);
    for (const row of rows) expect(row.content_hash, JSON.stringify(row.content)).toBe(contentHash(row.content));
  });
});
