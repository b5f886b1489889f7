import { Index, type Table as LanceTable } from "@lancedb/lancedb";
import { Bool, Field, FixedSizeList, Float32, List, RecordBatch, Schema, Struct, Table, Utf8, makeData, vectorFromArray, type DataType } from "apache-arrow";
import { idIn } from "../vector/lance-filter.js";
import { eachLanceIdPage, lanceHolding } from "../vector/lance-ids.js";
import { checkDimensions, lastPerId } from "../vector/records.js";
import { serialQueue } from "../vector/serial.js";
import { lanceIndexWork } from "../vector/lance-scratch.js";
import { connectLance, type LanceConnectionOptions } from "../vector/lance-session.js";
import { annSearch, bm25Searcher, defaultAnnPolicy, ensureAnnIndex, ensureFullTextIndex, vectorHits, versionRetentionMs } from "../vector/lancedb-index.js";
import { lanceRowCache } from "../vector/lance-row-cache.js";
import { retryConflicts } from "../vector/lance-retry.js";
import { skillFilterMatchesNothing, type SkillVectorFilter, type SkillVectorIndex, type SkillVectorRecord } from "./skill-vector-index.js";

const utf8List = () => new List(new Field("item", new Utf8(), true));

function skillSchema(dimensions: number): Schema {
  return new Schema([
    new Field("id", new Utf8(), false),
    new Field("workspace_id", new Utf8(), false),
    new Field("containers", utf8List(), false),
    new Field("tags", utf8List(), false),
    new Field("maturity", new Utf8(), false),
    new Field("state", new Utf8(), false),
    new Field("text", new Utf8(), false),
    new Field("vector", new FixedSizeList(dimensions, new Field("item", new Float32(), true)), false),
    new Field("marketplace", new Bool(), false),
  ]);
}

function toArrow(schema: Schema, dimensions: number, records: readonly SkillVectorRecord[]): Table {
  const flat = new Float32Array(records.length * dimensions);
  records.forEach((r, i) => flat.set(r.vector, i * dimensions));
  const column = (values: unknown[], type: DataType) => vectorFromArray(values as never, type).data[0]!;
  const children = [
    column(records.map((r) => r.id), new Utf8()),
    column(records.map((r) => r.workspaceId), new Utf8()),
    column(records.map((r) => r.containers), utf8List()),
    column(records.map((r) => r.tags), utf8List()),
    column(records.map((r) => r.maturity), new Utf8()),
    column(records.map((r) => r.state), new Utf8()),
    column(records.map((r) => r.text), new Utf8()),
    makeData({
      type: schema.fields[7]!.type as FixedSizeList<Float32>,
      length: records.length,
      nullCount: 0,
      child: makeData({ type: new Float32(), length: flat.length, data: flat }),
    }),
    column(records.map((r) => r.marketplace), new Bool()),
  ];
  return new Table(new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: records.length, nullCount: 0, children })));
}

const sqlString = (value: string) => `'${value.replaceAll("'", "''")}'`;
const sqlList = (values: readonly string[]) => values.map(sqlString).join(", ");

function skillLanceFilter(f: SkillVectorFilter): string {
  const clauses = [f.marketplace ? "marketplace = true" : `workspace_id = ${sqlString(f.workspaceId)}`];
  if (f.containers) clauses.push(`array_has_any(containers, [${sqlList(f.containers)}])`);
  if (f.tags) clauses.push(`array_has_any(tags, [${sqlList(f.tags)}])`);
  if (f.maturities) clauses.push(`maturity IN (${sqlList(f.maturities)})`);
  if (f.states) clauses.push(`state IN (${sqlList(f.states)})`);
  return clauses.join(" AND ");
}

/**
 * Tables made before the marketplace lack its column; no skill was public then, so it starts false.
 * Nodes starting together may race to add it: the loser finds it there.
 */
async function addMarketplaceColumn(table: LanceTable): Promise<void> {
  // The latest version: this handle looks for other nodes' versions only at its read-consistency interval.
  const present = async () => {
    await table.checkoutLatest();
    return (await table.schema()).fields.some((f) => f.name === "marketplace");
  };
  if (await present()) return;
  try {
    await retryConflicts(() => table.addColumns([{ name: "marketplace", valueSql: "false" }]));
  } catch (err) {
    if (!(await present())) throw err;
  }
}

/** The skills collection in LanceDB: its own table next to the memories'. */
export async function openLanceSkillIndex(options: LanceConnectionOptions & { dimensions: number }): Promise<SkillVectorIndex> {
  const { dimensions } = options;
  const schema = skillSchema(dimensions);
  const connection = await connectLance(options);
  const name = `skills_v1_${dimensions}`;
  // Nodes creating the table together are each told it exists once its first version is committed (a
  // table listed by tableNames() may not have one yet, and cannot be opened). A table of an earlier layout
  // is refused for its schema; it is opened as it is and brought up to date below.
  const table = await retryConflicts(async () => {
    try {
      return await connection.createEmptyTable(name, schema, { mode: "create", existOk: true });
    } catch (err) {
      if (!/does not match existing table schema/i.test(String(err))) throw err;
      return connection.openTable(name);
    }
  });
  await addMarketplaceColumn(table);
  // BM25 over keywordText; rows written since the last optimize() are scanned.
  await ensureFullTextIndex(table, "text");
  const rowCache = lanceRowCache(table, { dimensions, maxVectorBytes: options.heldVectorsBytes });
  await rowCache.fill();
  const bm25 = bm25Searcher(table, "text", rowCache);
  const write = serialQueue();
  const ann = await annSearch(table);

  return {
    kind: "lancedb",

    upsert: (records) =>
      write(async () => {
        if (records.length === 0) return;
        for (const r of records) checkDimensions(r.vector, dimensions);
        const rows = toArrow(schema, dimensions, lastPerId(records));
        await retryConflicts(() => table.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(rows));
      }),

    delete: (ids) =>
      write(async () => {
        if (ids.length > 0) await retryConflicts(() => table.delete(idIn(ids)));
      }),

    async search(vector, filter, k) {
      checkDimensions(vector, dimensions);
      if (k <= 0 || skillFilterMatchesNothing(filter)) return [];
      const where = { scoped: skillLanceFilter(filter) };
      const [hits] = await ann.nearestThenExact([vector], k, where.scoped, ([v], exhaustive) =>
        vectorHits(rowCache, 1, k, where, (clause) => ann.configure(table.vectorSearch(v!).distanceType("cosine").where(clause), exhaustive)),
      );
      return hits!;
    },

    async keywordSearch(query, filter, k, withVectors) {
      if (k <= 0 || skillFilterMatchesNothing(filter)) return [];
      return bm25(query, { scoped: skillLanceFilter(filter) }, k, withVectors);
    },

    optimize: () =>
      write(() => lanceIndexWork(async () => {
        await retryConflicts(() => table.optimize({ cleanupOlderThan: new Date(Date.now() - versionRetentionMs) }));
        const rows = await table.countRows();
        if (rows === 0) return;
        const indexed = new Set((await table.listIndices()).flatMap((i) => i.columns));
        if (!indexed.has("id")) await retryConflicts(() => table.createIndex("id", { config: Index.btree() }));
        if (!indexed.has("workspace_id")) await retryConflicts(() => table.createIndex("workspace_id", { config: Index.bitmap() }));
        await ensureAnnIndex(table, rows, dimensions, defaultAnnPolicy);
        await ann.refresh();
        // Compaction moved rows to new addresses: their ids are read now, their vectors by a later search.
        await rowCache.fill(false);
      })),

    eachIdPage: (size, fn) => eachLanceIdPage(table, size, fn),

    holding: (ids) => lanceHolding(table, ids),

    count: () => table.countRows(),

    async close() {
      ann.stop();
      await write(async () => undefined);
      table.close();
      connection.close();
    },
  };
}
