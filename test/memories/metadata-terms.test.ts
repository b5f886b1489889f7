import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/db/database.js";
import { addMetadataConditions, Conditions } from "../../src/memories/memory-list.js";
import { parseMetadataFilter } from "../../src/memories/metadata-filter.js";
import { filterTerms, metadataTerms } from "../../src/memories/metadata-terms.js";
import { prng } from "../../bench/lib/synthetic.js";

// The index decides a metadata filter by terms; Postgres decides it by jsonb containment with the filter's
// arrays compared for equality. Both must agree on every pair: generated metadata and filters (seeded, so
// every run checks the same pairs), many of them near misses, compared against Postgres itself.

const rand = prng(42);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const scalars: JsonValue[] = [0, 1, 1.5, "a", "b", "1", true, false, null];
const keys = ["x", "y", "z", "x.y", ""];

function value(depth: number): JsonValue {
  const r = rand();
  if (depth > 2 || r < 0.5) return pick(scalars);
  if (r < 0.75) return Array.from({ length: Math.floor(rand() * 3) }, () => (rand() < 0.8 ? pick(scalars) : object(depth + 1)));
  return object(depth + 1);
}

function object(depth: number): JsonObject {
  const o: JsonObject = {};
  for (let i = Math.floor(rand() * 4); i > 0; i--) o[pick(keys)] = value(depth);
  return o;
}

/** A filter made from the metadata: a random part of it, sometimes changed, so matches and near misses both occur. */
function filterFrom(m: JsonObject, depth = 0): JsonObject {
  const f: JsonObject = {};
  for (const [k, v] of Object.entries(m)) {
    if (rand() < 0.4) continue;
    const isObject = typeof v === "object" && v !== null && !Array.isArray(v);
    if (rand() < 0.15) f[k] = value(depth);
    else if (isObject && rand() < 0.7) f[k] = filterFrom(v, depth + 1);
    else if (Array.isArray(v) && rand() < 0.3) f[k] = v.slice(0, -1);
    else f[k] = v;
  }
  if (rand() < 0.1) f[pick(keys)] = value(depth);
  return f;
}

describe("metadata terms", () => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ dataDir: "memory://", poolSize: 1 });
  });
  afterAll(() => db?.close());

  it("match exactly the metadata that Postgres' containment matches", async () => {
    const handPicked: Array<[JsonObject, JsonObject]> = [
      [{ a: [1, 2] }, { a: 1 }], // a nested array does not contain a scalar
      [{ a: [1, 2] }, { a: [1, 2] }],
      [{ a: [1, 2] }, { a: [2, 1] }], // arrays are compared for equality, in order
      [{ a: [1, 1] }, { a: [1] }],
      [{ a: {} }, { a: {} }],
      [{ a: { b: 1 } }, { a: {} }],
      [{ a: [] }, { a: {} }],
      [{ a: 1 }, { a: {} }],
      [{ a: 1.0 }, { a: 1 }],
      [{ a: [{ x: 1, y: 2 }] }, { a: [{ y: 2, x: 1 }] }], // objects inside arrays compare as key sets
      [{ "a.b": 1 }, { a: { b: 1 } }], // a dot is part of a key, not a path separator
      [{ a: { b: 1 } }, { "a.b": 1 }],
      [{ a: null }, { a: null }],
      [{ a: "1" }, { a: 1 }],
      [{ a: { b: { c: [true] } }, d: 0 }, { a: { b: { c: [true] } } }],
    ];
    const metadata = [...handPicked.map(([m]) => m), ...Array.from({ length: 300 }, () => object(0))];
    const filters = [
      ...handPicked.map(([, f]) => f),
      ...Array.from({ length: 300 }, () => filterFrom(pick(metadata))),
      ...Array.from({ length: 60 }, () => object(0)),
    ]
      .map((f) => parseMetadataFilter(f, "metadata"))
      .filter((f) => f !== null);

    const byIndex = new Map<number, Set<string>>();
    const terms = metadata.map((m) => new Set(metadataTerms(m)));
    filters.forEach((f, i) => {
      const wanted = filterTerms(f);
      byIndex.set(i, new Set(metadata.flatMap((_, j) => (wanted.every((t) => terms[j]!.has(t)) ? [String(j)] : []))));
    });

    await db.query("create temporary table meta (id text, metadata jsonb)");
    await db.query("insert into meta select (r.i - 1)::text, r.m from jsonb_array_elements($1::jsonb) with ordinality as r(m, i)", [JSON.stringify(metadata)]);
    let matches = 0;
    for (const [i, f] of filters.entries()) {
      const c = new Conditions();
      addMetadataConditions(c, f);
      const rows = await db.query<{ id: string }>(`select m.id from meta m where ${c.where}`, c.params);
      const byPostgres = new Set(rows.map((r) => r.id));
      matches += byPostgres.size;
      expect([...byIndex.get(i)!].sort(), `filter ${JSON.stringify(f.contains)}`).toEqual([...byPostgres].sort());
    }
    // The generated pairs must exercise both outcomes for the comparison to mean anything.
    expect(matches).toBeGreaterThan(filters.length);
    expect(matches).toBeLessThan(filters.length * metadata.length * 0.5);
  });

  it("cost what the metadata's size does, however deep it nests", () => {
    let deep: JsonObject = { leaf: "x" };
    for (let i = 0; i < 3000; i++) deep = { k: deep };
    const terms = metadataTerms(deep);
    expect(terms).toHaveLength(3001);
    expect(new Set(terms).size).toBe(3001);
    expect(terms.every((t) => t.length === 22)).toBe(true);
  });
});
