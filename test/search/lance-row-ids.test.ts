import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { connect, type Connection, type Table } from "@lancedb/lancedb";
import { afterEach, describe, expect, it, vi } from "vitest";
import { lanceSchema, toArrowTable } from "../../src/search/vector/lance-records.js";
import { lanceRowIds, type AddressedSearch } from "../../src/search/vector/lance-row-ids.js";
import type { VectorRecord } from "../../src/search/vector/vector-index.js";
import { prng } from "../../bench/lib/synthetic.js";
import { vectorRecord } from "../support/vector-records.js";

const dims = 8;
const schema = lanceSchema(dims);
const rand = prng(11);

const record = (i: number) => vectorRecord(i, Float32Array.from({ length: dims }, () => rand() - 0.5));

const upsert = (table: Table, records: VectorRecord[]) =>
  table.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(toArrowTable(schema, dims, records));

/** A vector search for every row, counting how often it ran by address and by id. */
function everyRow(table: Table, rows: number) {
  const runs = { byAddress: 0, byId: 0 };
  const probe = new Float32Array(dims).fill(0.1);
  const search: AddressedSearch = (byAddress) => {
    runs[byAddress ? "byAddress" : "byId"]++;
    const q = table.vectorSearch(probe).distanceType("cosine").bypassVectorIndex().limit(rows);
    return (byAddress ? q.select(["_distance"]).withRowId() : q.select(["id", "_distance"])).toArrow();
  };
  return { runs, search };
}

/** The ids the same search returns reading the id column, in its order. */
async function idsRead(table: Table, rows: number): Promise<string[]> {
  const result = await everyRow(table, rows).search(false);
  return result.getChild("id")!.toArray() as string[];
}

describe("lanceRowIds", () => {
  let dir: string;
  let connections: Connection[] = [];
  const open = async () => {
    const connection = await connect(dir, { readConsistencyInterval: 0 });
    connections.push(connection);
    return connection;
  };
  const table = async () => {
    const connection = await open();
    return (await connection.tableNames()).includes("t") ? connection.openTable("t") : connection.createEmptyTable("t", schema);
  };
  afterEach(async () => {
    for (const c of connections) c.close();
    connections = [];
    await rm(dir, { recursive: true, force: true });
  });

  it("names a search's rows by their addresses after another handle writes, updates, deletes and compacts", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-rowids-"));
    const reader = await table();
    await upsert(reader, Array.from({ length: 200 }, (_, i) => record(i)));
    const rowIds = lanceRowIds(reader);
    await rowIds.fill();
    expect(rowIds.held).toBe(200);
    const first = everyRow(reader, 400);
    expect((await rowIds.search(first.search)).ids).toEqual(await idsRead(reader, 400));
    expect(first.runs).toEqual({ byAddress: 1, byId: 0 });

    const writer = await table();
    await upsert(writer, [...Array.from({ length: 50 }, (_, i) => record(200 + i)), ...Array.from({ length: 10 }, (_, i) => record(i))]);
    await writer.delete(`id IN ('${record(20).id}', '${record(21).id}')`);
    await writer.optimize();
    const after = everyRow(reader, 400);
    const ids = (await rowIds.search(after.search)).ids;
    expect(ids).toHaveLength(248);
    expect(ids).toEqual(await idsRead(reader, 400));
    // Every address moved: taken from the table, not searched again.
    expect(after.runs).toEqual({ byAddress: 1, byId: 0 });
  });

  it("reads every id again in the background when a search found most of its addresses unknown", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-rowids-"));
    const reader = await table();
    await upsert(reader, Array.from({ length: 100 }, (_, i) => record(i)));
    const rowIds = lanceRowIds(reader, { refillAfterMs: 0 });
    await rowIds.fill();
    const writer = await table();
    await upsert(writer, Array.from({ length: 30 }, (_, i) => record(100 + i)));
    await writer.optimize();
    await rowIds.search(everyRow(reader, 200).search);
    // The search took the 130 moved rows; the refill it started reads them all again.
    await vi.waitFor(() => expect(rowIds.held).toBe(130));
  });

  it("runs the search again reading ids when the table no longer holds an address it returned", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-rowids-"));
    const latest = await table();
    await upsert(latest, Array.from({ length: 40 }, (_, i) => record(i)));
    await upsert(latest, Array.from({ length: 40 }, (_, i) => record(40 + i)));
    const before = await latest.version();
    await latest.optimize();
    // Addresses from the version before the compaction, which the latest version no longer has.
    const stale = await table();
    await stale.checkout(before);
    const rowIds = lanceRowIds(latest);
    const runs = { byAddress: 0, byId: 0 };
    const search: AddressedSearch = (byAddress) => (byAddress ? everyRow(stale, 100) : everyRow(latest, 100)).search(byAddress).finally(() => runs[byAddress ? "byAddress" : "byId"]++);
    expect((await rowIds.search(search)).ids).toEqual(await idsRead(latest, 100));
    expect(runs).toEqual({ byAddress: 1, byId: 1 });
  });

  it("keeps at most maxBytes of ids, and names the rest by taking them", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-rowids-"));
    const reader = await table();
    await upsert(reader, Array.from({ length: 100 }, (_, i) => record(i)));
    // Eight bytes a row plus its 30-character id.
    const rowIds = lanceRowIds(reader, { maxBytes: 10 * 38, refillAfterMs: 0 });
    await rowIds.fill();
    expect(rowIds.held).toBe(10);
    const every = everyRow(reader, 100);
    expect((await rowIds.search(every.search)).ids).toEqual(await idsRead(reader, 100));
    expect(rowIds.held).toBe(10);
    expect(every.runs).toEqual({ byAddress: 1, byId: 0 });
  });

  it("holds only printable ASCII ids, and names the others by taking them", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-rowids-"));
    const reader = await table();
    await upsert(reader, [...Array.from({ length: 5 }, (_, i) => record(i)), { ...record(5), id: "mem_café" }, { ...record(6), id: "mem_tab\tbed" }]);
    const rowIds = lanceRowIds(reader);
    await rowIds.fill();
    expect(rowIds.held).toBe(5);
    const every = everyRow(reader, 10);
    const ids = (await rowIds.search(every.search)).ids;
    expect(ids).toEqual(await idsRead(reader, 10));
    expect(ids).toContain("mem_café");
    expect(every.runs).toEqual({ byAddress: 1, byId: 0 });
  });
});
