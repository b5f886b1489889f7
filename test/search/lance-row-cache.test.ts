import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { connect, type Connection, type Table } from "@lancedb/lancedb";
import { afterEach, describe, expect, it, vi } from "vitest";
import { lanceSchema, toArrowTable } from "../../src/search/vector/lance-records.js";
import { lanceRowCache, type AddressedSearch, type LanceRowCache } from "../../src/search/vector/lance-row-cache.js";
import { withWhere, type LanceWhere } from "../../src/search/vector/lance-filter.js";
import type { SearchScope } from "../../src/search/vector/scope-coverage.js";
import type { VectorRecord } from "../../src/search/vector/vector-index.js";
import { prng } from "../../bench/lib/synthetic.js";
import { vectorRecord } from "../support/vector-records.js";

const dims = 8;
const schema = lanceSchema(dims);
const rand = prng(11);

const record = (i: number, overrides: Partial<VectorRecord> = {}) => vectorRecord(i, Float32Array.from({ length: dims }, () => rand() - 0.5), overrides);

const upsert = (table: Table, records: VectorRecord[]) =>
  table.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(toArrowTable(schema, dims, records));

/** No WHERE clause: the searches below choose their rows themselves. */
const everywhere: LanceWhere = { scoped: "" };

/** A vector search for every row, counting how often it ran by address and by id, and with vectors read. */
function everyRow(table: Table, rows: number) {
  const runs = { byAddress: 0, byId: 0, readingVectors: 0 };
  const probe = new Float32Array(dims).fill(0.1);
  const search: AddressedSearch = (byAddress, readVectors) => {
    runs[byAddress ? "byAddress" : "byId"]++;
    if (readVectors) runs.readingVectors++;
    const q = table.vectorSearch(probe).distanceType("cosine").bypassVectorIndex().limit(rows);
    const columns = ["_distance", ...(readVectors ? ["vector"] : [])];
    return (byAddress ? q.select(columns).withRowId() : q.select(["id", ...columns])).toArrow();
  };
  return { runs, search };
}

/**
 * The 10 rows nearest `probe` in `scope` (`where`: its clauses, and none unscoped), searched with the
 * clause a row cache asks for; `scoped` lists whether each run by address was asked with the scope's.
 */
function nearestIn(table: Table, probe: Float32Array, scope: SearchScope) {
  const scoped: boolean[] = [];
  const clause = `workspace_id = '${scope.workspaceId}'${scope.containers ? ` AND array_has_any(containers, ['${scope.containers.join("', '")}'])` : ""}`;
  const where: LanceWhere = { scoped: clause, unscoped: { where: "", scope } };
  const search: AddressedSearch = (byAddress, _, asked) => {
    if (byAddress) scoped.push(asked === clause);
    const q = table.vectorSearch(probe).distanceType("cosine").bypassVectorIndex().limit(10);
    return withWhere(byAddress ? q.select(["_distance"]).withRowId() : q.select(["id", "_distance"]), asked).toArrow();
  };
  // A search without hits yields an Arrow table without columns.
  const expected = async () => ((await search(false, false, clause)).getChild("id")?.toArray() ?? []) as string[];
  return { scoped, search, where, expected };
}

/** The ids the same search returns reading the id column, in its order. */
async function idsRead(table: Table, rows: number): Promise<string[]> {
  const result = await everyRow(table, rows).search(false, false, "");
  return result.getChild("id")!.toArray() as string[];
}

/** The vectors the same search returns reading the vector column, in its order. */
async function vectorsRead(table: Table, rows: number): Promise<Float32Array[]> {
  const result = await everyRow(table, rows).search(false, true, "");
  return Array.from({ length: result.numRows }, (_, i) => result.getChild("vector")!.get(i)!.toArray() as Float32Array);
}

/** The largest difference between two lists of vectors, component by component. */
function largestDifference(a: Float32Array[], b: Float32Array[]): number {
  expect(a).toHaveLength(b.length);
  return Math.max(...a.flatMap((v, i) => Array.from(v, (x, d) => Math.abs(x - b[i]![d]!))));
}

// Components lie in [-0.5, 0.5): a step of the 8-bit codes is at most 0.5 / 127, and each is off by half a step at most.
const halfStep = 0.5 / 254 + 1e-7;

/**
 * Searches every row for its vectors through `rowCache`, checks them (exact when the search read them,
 * within half a step when held) and tells whether the search read them from the table.
 */
async function searchReadsVectors(rowCache: LanceRowCache, table: Table): Promise<boolean> {
  const every = everyRow(table, 200);
  const { vectors } = await rowCache.search(every.search, everywhere, true);
  const read = await vectorsRead(table, 200);
  expect(every.runs).toMatchObject({ byAddress: 1, byId: 0 });
  if (every.runs.readingVectors > 0) expect(vectors).toEqual(read);
  else expect(largestDifference(vectors!, read)).toBeLessThanOrEqual(halfStep);
  return every.runs.readingVectors > 0;
}

describe("lanceRowCache", () => {
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
    const rowCache = lanceRowCache(reader);
    await rowCache.fill();
    expect(rowCache.held).toBe(200);
    const first = everyRow(reader, 400);
    expect((await rowCache.search(first.search, everywhere)).ids).toEqual(await idsRead(reader, 400));
    expect(first.runs).toEqual({ byAddress: 1, byId: 0, readingVectors: 0 });

    const writer = await table();
    await upsert(writer, [...Array.from({ length: 50 }, (_, i) => record(200 + i)), ...Array.from({ length: 10 }, (_, i) => record(i))]);
    await writer.delete(`id IN ('${record(20).id}', '${record(21).id}')`);
    await writer.optimize();
    const after = everyRow(reader, 400);
    const ids = (await rowCache.search(after.search, everywhere)).ids;
    expect(ids).toHaveLength(248);
    expect(ids).toEqual(await idsRead(reader, 400));
    // Every address moved: taken from the table, not searched again.
    expect(after.runs).toEqual({ byAddress: 1, byId: 0, readingVectors: 0 });
  });

  it("reads every id again in the background when a search found most of its addresses unknown", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-rowids-"));
    const reader = await table();
    await upsert(reader, Array.from({ length: 100 }, (_, i) => record(i)));
    const rowCache = lanceRowCache(reader, { refillAfterMs: 0 });
    await rowCache.fill();
    const writer = await table();
    await upsert(writer, Array.from({ length: 30 }, (_, i) => record(100 + i)));
    await writer.optimize();
    await rowCache.search(everyRow(reader, 200).search, everywhere);
    // The search took the 130 moved rows; the refill it started reads them all again.
    await vi.waitFor(() => expect(rowCache.held).toBe(130));
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
    const rowCache = lanceRowCache(latest);
    const runs = { byAddress: 0, byId: 0 };
    const search: AddressedSearch = (byAddress, readVectors) =>
      (byAddress ? everyRow(stale, 100) : everyRow(latest, 100)).search(byAddress, readVectors, "").finally(() => runs[byAddress ? "byAddress" : "byId"]++);
    expect((await rowCache.search(search, everywhere)).ids).toEqual(await idsRead(latest, 100));
    expect(runs).toEqual({ byAddress: 1, byId: 1 });
    // Vectors too: those of the addresses gone are read with the ids.
    const withVectors = await rowCache.search(search, everywhere, true);
    expect(withVectors.ids).toEqual(await idsRead(latest, 100));
    expect(withVectors.vectors).toEqual(await vectorsRead(latest, 100));
  });

  it("keeps at most maxBytes of ids, and names the rest by taking them", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-rowids-"));
    const reader = await table();
    await upsert(reader, Array.from({ length: 100 }, (_, i) => record(i)));
    // Eight bytes a row plus its 30-character id.
    const rowCache = lanceRowCache(reader, { maxIdBytes: 10 * 38, refillAfterMs: 0 });
    await rowCache.fill();
    expect(rowCache.held).toBe(10);
    const every = everyRow(reader, 100);
    expect((await rowCache.search(every.search, everywhere)).ids).toEqual(await idsRead(reader, 100));
    expect(rowCache.held).toBe(10);
    expect(every.runs).toEqual({ byAddress: 1, byId: 0, readingVectors: 0 });
  });

  it("holds the table's vectors in 8 bits while they all fit, so a search that wants vectors does not read them", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-rowids-"));
    const reader = await table();
    await upsert(reader, Array.from({ length: 100 }, (_, i) => record(i)));
    const rowCache = lanceRowCache(reader, { dimensions: dims });
    await rowCache.fill();
    expect(await searchReadsVectors(rowCache, reader)).toBe(false);

    // Rows written since the fill have theirs taken, as they are.
    const writer = await table();
    await upsert(writer, Array.from({ length: 20 }, (_, i) => record(100 + i)));
    const later = everyRow(reader, 200);
    const mixed = await rowCache.search(later.search, everywhere, true);
    const read = await vectorsRead(reader, 200);
    expect(mixed.ids).toEqual(await idsRead(reader, 200));
    const written = mixed.ids.flatMap((id, i) => (Number(id.slice("mem_".length)) >= 100 ? [i] : []));
    expect(written).toHaveLength(20);
    for (const i of written) expect(mixed.vectors![i]).toEqual(read[i]);
    expect(largestDifference(mixed.vectors!, read)).toBeLessThanOrEqual(halfStep);
    expect(later.runs).toEqual({ byAddress: 1, byId: 0, readingVectors: 0 });
  });

  it("leaves the vectors out of a fill after an optimize, and reads them again once a search wants them refillAfterMs later", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-rowids-"));
    const reader = await table();
    await upsert(reader, Array.from({ length: 100 }, (_, i) => record(i)));
    const rowCache = lanceRowCache(reader, { dimensions: dims, refillAfterMs: 0 });
    await rowCache.fill(false);
    expect(rowCache.holdsVectors).toBe(false);
    expect(await searchReadsVectors(rowCache, reader)).toBe(true);
    // That search started a fill with vectors in the background.
    await vi.waitFor(() => expect(rowCache.holdsVectors).toBe(true));
    expect(await searchReadsVectors(rowCache, reader)).toBe(false);
  });

  it("leaves the vectors to the search when the table's do not all fit maxVectorBytes", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-rowids-"));
    const reader = await table();
    // A cap of 0 holds none, not even those of an empty table.
    const none = lanceRowCache(reader, { dimensions: dims, maxVectorBytes: 0 });
    await none.fill();
    await upsert(reader, Array.from({ length: 100 }, (_, i) => record(i)));
    expect(await searchReadsVectors(none, reader)).toBe(true);
    // A row's vector takes its codes and a float32 scale.
    const cramped = lanceRowCache(reader, { dimensions: dims, maxVectorBytes: 99 * (dims + 4) });
    await cramped.fill();
    expect(await searchReadsVectors(cramped, reader)).toBe(true);
    const roomy = lanceRowCache(reader, { dimensions: dims, maxVectorBytes: 100 * (dims + 4) });
    await roomy.fill();
    expect(await searchReadsVectors(roomy, reader)).toBe(false);
  });

  it("holds only printable ASCII ids, and names the others by taking them", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-rowids-"));
    const reader = await table();
    await upsert(reader, [...Array.from({ length: 5 }, (_, i) => record(i)), { ...record(5), id: "mem_café" }, { ...record(6), id: "mem_tab\tbed" }]);
    const rowCache = lanceRowCache(reader);
    await rowCache.fill();
    expect(rowCache.held).toBe(5);
    const every = everyRow(reader, 10);
    const ids = (await rowCache.search(every.search, everywhere)).ids;
    expect(ids).toEqual(await idsRead(reader, 10));
    expect(ids).toContain("mem_café");
    expect(every.runs).toEqual({ byAddress: 1, byId: 0, readingVectors: 0 });
  });

  it("searches a table whose rows share one scope without its clauses, and with them once a row of another scope is among the hits", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-rowids-"));
    const reader = await table();
    // Every row is in workspace ws_a and container main; half are in container x too.
    await upsert(reader, Array.from({ length: 60 }, (_, i) => record(i, { containers: i % 2 === 0 ? ["main", "x"] : ["main"] })));
    const rowCache = lanceRowCache(reader, { readsScope: true });
    await rowCache.fill();
    const probe = new Float32Array(dims).fill(0.1);
    const search = async (scope: SearchScope) => {
      const nearest = nearestIn(reader, probe, scope);
      const { ids } = await rowCache.search(nearest.search, nearest.where);
      expect(ids).toEqual(await nearest.expected());
      return nearest.scoped;
    };
    expect(await search({ workspaceId: "ws_a", containers: ["main"] })).toEqual([false]);
    expect(await search({ workspaceId: "ws_a", containers: ["other", "main"] })).toEqual([false]);
    expect(await search({ workspaceId: "ws_a" })).toEqual([false]);
    // Scopes some rows are not in.
    expect(await search({ workspaceId: "ws_a", containers: ["x"] })).toEqual([true]);
    expect(await search({ workspaceId: "ws_b" })).toEqual([true]);
    // Without readsScope, every search is scoped.
    const plain = lanceRowCache(reader);
    await plain.fill();
    const nearest = nearestIn(reader, probe, { workspaceId: "ws_a" });
    await plain.search(nearest.search, nearest.where);
    expect(nearest.scoped).toEqual([true]);

    // Another workspace's row, nearest of all, written since the fill: the unscoped search finds it and
    // is run again with the scope, as are the searches after it until the next fill.
    const writer = await table();
    await upsert(writer, [record(100, { workspaceId: "ws_b", vector: probe })]);
    expect(await search({ workspaceId: "ws_a", containers: ["main"] })).toEqual([false, true]);
    expect(await search({ workspaceId: "ws_a", containers: ["main"] })).toEqual([true]);
    // The table's rows no longer share a workspace.
    await rowCache.fill();
    expect(await search({ workspaceId: "ws_a", containers: ["main"] })).toEqual([true]);
    await writer.delete(`id = '${record(100).id}'`);
    await rowCache.fill();
    expect(await search({ workspaceId: "ws_a", containers: ["main"] })).toEqual([false]);
    // A row of the scope written since is taken with its scope, and the search stands.
    await upsert(writer, [record(101, { vector: probe })]);
    expect(await search({ workspaceId: "ws_a", containers: ["main"] })).toEqual([false]);
    expect(await search({ workspaceId: "ws_a", containers: ["main"] })).toEqual([false]);
    // One of a container the search is not in, taken before it came first, is known by its scope.
    await upsert(writer, [record(102, { containers: ["x"], vector: probe })]);
    const inX = nearestIn(reader, probe, { workspaceId: "ws_a", containers: ["x"] });
    await rowCache.search(inX.search, inX.where);
    expect(await search({ workspaceId: "ws_a", containers: ["main"] })).toEqual([false, true]);
  });
});
