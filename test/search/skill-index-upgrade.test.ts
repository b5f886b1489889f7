import { connect } from "@lancedb/lancedb";
import { Field, FixedSizeList, Float32, List, Schema, Utf8 } from "apache-arrow";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openLanceSkillIndex } from "../../src/search/skills/lancedb-skill-index.js";

// A skills table written before the marketplace (no `marketplace` column) opens, gains the column
// (false: nothing was public then), and keeps its rows searchable.

const dimensions = 4;
const utf8List = () => new List(new Field("item", new Utf8(), true));
const beforeMarketplace = new Schema([
  new Field("id", new Utf8(), false),
  new Field("workspace_id", new Utf8(), false),
  new Field("containers", utf8List(), false),
  new Field("tags", utf8List(), false),
  new Field("maturity", new Utf8(), false),
  new Field("state", new Utf8(), false),
  new Field("text", new Utf8(), false),
  new Field("vector", new FixedSizeList(dimensions, new Field("item", new Float32(), true)), false),
]);

describe("a LanceDB skills table from before the marketplace", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-skill-upgrade-"));
    const connection = await connect(dir);
    const table = await connection.createEmptyTable(`skills_v1_${dimensions}`, beforeMarketplace);
    await table.add([
      { id: "skl_old", workspace_id: "ws", containers: ["*"], tags: [], maturity: "stable", state: "active", text: "invoice tables from pdf", vector: [1, 0, 0, 0] },
    ]);
    table.close();
    connection.close();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("opens with its rows, which are not in the marketplace", async () => {
    const index = await openLanceSkillIndex({ uri: dir, dimensions });
    try {
      expect(await index.search(Float32Array.from([1, 0, 0, 0]), { workspaceId: "ws" }, 5)).toEqual([{ id: "skl_old", similarity: 1 }]);
      expect((await index.keywordSearch("invoice", { workspaceId: "ws" }, 5, false)).map((h) => h.id)).toEqual(["skl_old"]);
      expect(await index.search(Float32Array.from([1, 0, 0, 0]), { marketplace: true }, 5)).toEqual([]);
    } finally {
      await index.close();
    }
  });
});
