import {
  type DataType,
  Field,
  FixedSizeList,
  Float32,
  Float64,
  Int64,
  List,
  Schema,
  Struct,
  Table,
  Utf8,
  makeData,
  RecordBatch,
  vectorFromArray,
} from "apache-arrow";
import type { VectorRecord } from "./vector-index.js";

const utf8List = () => new List(new Field("item", new Utf8(), true));

/** The metadata's terms (src/memories/metadata-terms.ts); null in rows written before the column existed. */
export const metadataTermsColumn = "metadata_terms";

/**
 * The LanceDB table schema. Times are int64 epoch milliseconds so filters compare plain integer literals;
 * confidence is float64 so `confidence >= 0.7` matches a stored 0.7 exactly (float32 would round it down).
 */
export function lanceSchema(dimensions: number): Schema {
  return new Schema([
    new Field("id", new Utf8(), false),
    new Field("workspace_id", new Utf8(), false),
    new Field("containers", utf8List(), false),
    new Field("type", new Utf8(), false),
    new Field("tags", utf8List(), false),
    new Field("severity", new Utf8(), true),
    new Field("confidence", new Float64(), false),
    new Field("state", new Utf8(), false),
    new Field("valid_from", new Int64(), false),
    new Field("valid_until", new Int64(), true),
    new Field("created_at", new Int64(), false),
    new Field("content", new Utf8(), false),
    new Field("vector", new FixedSizeList(dimensions, new Field("item", new Float32(), true)), false),
    // Last, where addColumns puts it in a table made before it existed, so both layouts are one schema.
    new Field(metadataTermsColumn, utf8List(), true),
  ]);
}

/** Builds an Arrow table column by column; the vectors are copied once into one contiguous buffer. */
export function toArrowTable(schema: Schema, dimensions: number, records: readonly VectorRecord[]): Table {
  const length = records.length;
  const flat = new Float32Array(length * dimensions);
  records.forEach((r, i) => flat.set(r.vector, i * dimensions));
  const vectorType = schema.fields.find((f) => f.name === "vector")!.type as FixedSizeList<Float32>;
  const bigint = (ms: number) => BigInt(Math.trunc(ms));
  const column = (values: unknown[], type: DataType) => vectorFromArray(values as never, type).data[0]!;
  const children = [
    column(records.map((r) => r.id), new Utf8()),
    column(records.map((r) => r.workspaceId), new Utf8()),
    column(records.map((r) => r.containers), utf8List()),
    column(records.map((r) => r.type), new Utf8()),
    column(records.map((r) => r.tags), utf8List()),
    column(records.map((r) => r.severity), new Utf8()),
    column(records.map((r) => r.confidence), new Float64()),
    column(records.map((r) => r.state), new Utf8()),
    column(records.map((r) => bigint(r.validFrom)), new Int64()),
    column(records.map((r) => (r.validUntil === null ? null : bigint(r.validUntil))), new Int64()),
    column(records.map((r) => bigint(r.createdAt)), new Int64()),
    column(records.map((r) => r.content), new Utf8()),
    makeData({
      type: vectorType,
      length,
      nullCount: 0,
      child: makeData({ type: new Float32(), length: flat.length, data: flat }),
    }),
    column(records.map((r) => r.metadataTerms), utf8List()),
  ];
  const struct = makeData({ type: new Struct(schema.fields), length, nullCount: 0, children });
  return new Table(new RecordBatch(schema, struct));
}

/** Ids with their metadata terms: a partial row, for a merge that updates only that column. */
export function metadataTermsTable(rows: ReadonlyArray<{ id: string; terms: string[] }>): Table {
  const schema = new Schema([new Field("id", new Utf8(), false), new Field(metadataTermsColumn, utf8List(), true)]);
  const children = [vectorFromArray(rows.map((r) => r.id), new Utf8()).data[0]!, vectorFromArray(rows.map((r) => r.terms) as never, utf8List()).data[0]!];
  const struct = makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children });
  return new Table(new RecordBatch(schema, struct));
}
