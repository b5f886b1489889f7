import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { connect, Index, MatchQuery, type Table } from "@lancedb/lancedb";
import { afterEach, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/database.js";
import { openPglite } from "../../src/db/pglite.js";
import { annSearch, compact, ensureFullTextIndex, openLanceIndex, probesFor } from "../../src/search/vector/lancedb-index.js";
import { serialQueue } from "../../src/search/vector/serial.js";
import { openLanceSkillIndex } from "../../src/search/skills/lancedb-skill-index.js";
import { openPgvectorSkillIndex } from "../../src/search/skills/pgvector-skill-index.js";
import type { SkillVectorRecord } from "../../src/search/skills/skill-vector-index.js";
import { lanceSchema, toArrowTable } from "../../src/search/vector/lance-records.js";
import { flatSearchPercent } from "../../src/search/vector/lance-session.js";
import { openPgvectorIndex } from "../../src/search/vector/pgvector-index.js";
import { cosine } from "../../src/search/scoring.js";
import type { MetadataTermsOf } from "../../src/search/vector/records.js";
import type { VectorFilter, VectorIndex, VectorRecord } from "../../src/search/vector/vector-index.js";
import { indexedIds } from "../support/indexed-ids.js";
import { vectorRecord } from "../support/vector-records.js";
import { startsProcessesTimeoutMs } from "../support/test-server.js";
import { watchedDatabase } from "../support/watched-database.js";
import { prng } from "../../bench/lib/synthetic.js";

const dims = 32;
const repoRoot = path.resolve(import.meta.dirname, "../..");

function unitVector(rand: () => number): Float32Array {
  const v = Float32Array.from({ length: dims }, () => rand() - 0.5);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/**
 * Unit vectors around a few topics, as sentence embeddings are. Uniform random vectors have no
 * neighbourhoods for an ANN index to find (every partition is as near as any other), so only an
 * exhaustive scan finds their nearest neighbours.
 */
function topicVectors(rand: () => number, topics: number): () => Float32Array {
  const centres = Array.from({ length: topics }, () => unitVector(rand));
  return () => {
    const centre = centres[Math.floor(rand() * topics)]!;
    const v = centre.map((x) => x + (rand() - 0.5) * 0.15);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
}

const day = 86_400_000;
const t0 = Date.UTC(2025, 0, 1);

function record(rand: () => number, i: number, overrides: Partial<VectorRecord> = {}): VectorRecord {
  return vectorRecord(i, unitVector(rand), { validFrom: t0, createdAt: t0 + i * day, ...overrides });
}

/** The filter semantics, written out plainly, for brute-force expectations. */
function matches(r: VectorRecord, f: VectorFilter): boolean {
  const anyOf = (have: string[], want?: string[]) => !want || have.some((h) => want.includes(h));
  return (
    r.workspaceId === f.workspaceId &&
    anyOf(r.containers, f.containers) &&
    anyOf([r.type], f.types) &&
    anyOf(r.tags, f.tags) &&
    (!f.severities || (r.severity !== null && f.severities.includes(r.severity))) &&
    (f.minConfidence === undefined || r.confidence >= f.minConfidence) &&
    anyOf([r.state], f.states) &&
    (f.createdAfter === undefined || r.createdAt >= f.createdAfter) &&
    (f.createdBefore === undefined || r.createdAt < f.createdBefore) &&
    (f.validAt === undefined || (r.validFrom <= f.validAt && (r.validUntil === null || r.validUntil > f.validAt)))
  );
}

function bruteForce(records: VectorRecord[], query: Float32Array, filter: VectorFilter, k: number) {
  return records
    .filter((r) => matches(r, filter))
    .map((r) => ({ id: r.id, similarity: cosine(r.vector, query) }))
    .sort((a, b) => b.similarity - a.similarity)
    .slice(0, k);
}

/** How far the hits' similarities are, at most, from the exact cosine of their records' vectors (ids from record()). */
function similarityError(records: VectorRecord[], query: Float32Array, hits: { id: string; similarity: number }[]): number {
  return Math.max(0, ...hits.map((h) => Math.abs(h.similarity - cosine(records[Number(h.id.slice(4))]!.vector, query))));
}

async function expectExact(index: VectorIndex, records: VectorRecord[], query: Float32Array, filter: VectorFilter, k: number) {
  const expected = bruteForce(records, query, filter, k);
  const got = await index.search(query, filter, k);
  expect(got.map((h) => h.id)).toEqual(expected.map((h) => h.id));
  got.forEach((h, i) => expect(Math.abs(h.similarity - expected[i]!.similarity)).toBeLessThan(1e-4));
  return got;
}

interface Opened {
  index: VectorIndex;
  /** Whether the ANN index exists, checked from outside the module. */
  hasAnnIndex(): Promise<boolean>;
  /** Closes the index, removes its metadata_terms column (the layout before it) and opens it again with termsOf. */
  reopenWithoutTerms(termsOf: MetadataTermsOf): Promise<VectorIndex>;
  cleanup(): Promise<void>;
}

interface Backend {
  name: "lancedb" | "pgvector";
  open(options?: { annThreshold?: number }): Promise<Opened>;
}

const lancedb: Backend = {
  name: "lancedb",
  async open(options = {}) {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-test-"));
    let index = await openLanceIndex({ uri: dir, dimensions: dims, ...options });
    return {
      get index() {
        return index;
      },
      async reopenWithoutTerms(metadataTermsOf) {
        await index.close();
        const conn = await connect(dir);
        const table = await conn.openTable(`memories_v2_${dims}`);
        await table.dropColumns(["metadata_terms"]);
        conn.close();
        index = await openLanceIndex({ uri: dir, dimensions: dims, ...options, metadataTermsOf });
        return index;
      },
      async hasAnnIndex() {
        const conn = await connect(dir);
        const table = await conn.openTable(`memories_v2_${dims}`);
        const found = (await table.listIndices()).some((i) => i.indexType === "IvfFlat");
        conn.close();
        return found;
      },
      async cleanup() {
        await index.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
};

const pgvector: Backend = {
  name: "pgvector",
  async open() {
    const db: Database = await openPglite("memory://", { vector: true });
    let index = await openPgvectorIndex(db, dims);
    return {
      get index() {
        return index;
      },
      async reopenWithoutTerms(metadataTermsOf) {
        await index.close();
        await db.query(`alter table memory_vectors_${dims} drop column metadata_terms`);
        index = await openPgvectorIndex(db, dims, metadataTermsOf);
        return index;
      },
      async hasAnnIndex() {
        const rows = await db.query<{ indexdef: string }>("select indexdef from pg_indexes where tablename = $1", [
          `memory_vectors_${dims}`,
        ]);
        return rows.some((r) => r.indexdef.includes("USING hnsw"));
      },
      async cleanup() {
        await index.close();
        await db.close();
      },
    };
  },
};

describe.each([lancedb, pgvector])("vector index ($name)", (backend) => {
  let opened: Opened[] = [];
  const open = async (options?: { annThreshold?: number }) => {
    const o = await backend.open(options);
    opened.push(o);
    return o.index;
  };
  afterEach(async () => {
    await Promise.all(opened.map((o) => o.cleanup()));
    opened = [];
  });

  it("returns the exact nearest neighbours with their cosine similarity", async () => {
    const index = await open();
    const rand = prng(1);
    const records = Array.from({ length: 500 }, (_, i) => record(rand, i));
    await index.upsert(records);
    expect(await index.count()).toBe(500);
    for (let q = 0; q < 10; q++) {
      await expectExact(index, records, unitVector(rand), { workspaceId: "ws_a", containers: ["main"] }, 10);
    }
    // The query vector itself comes back first with similarity 1.
    const [first] = await index.search(records[42]!.vector, { workspaceId: "ws_a" }, 1);
    expect(first!.id).toBe(records[42]!.id);
    expect(first!.similarity).toBeCloseTo(1, 4);
  });

  it("searches several vectors in one call, each answered as search() would, also while recalls search", async () => {
    const index = await open();
    const rand = prng(7);
    const records = Array.from({ length: 300 }, (_, i) => record(rand, i));
    await index.upsert(records);
    const queries = [unitVector(rand), records[5]!.vector, unitVector(rand), records[9]!.vector, unitVector(rand)];
    const filter = { workspaceId: "ws_a", containers: ["main"] };
    const many = await index.searchMany(queries, filter, 7);
    expect(many).toHaveLength(5);
    for (const [i, q] of queries.entries()) {
      const one = await index.search(q, filter, 7);
      expect(many[i]!.map((h) => h.id)).toEqual(one.map((h) => h.id));
      many[i]!.forEach((h, j) => expect(h.similarity).toBeCloseTo(one[j]!.similarity, 5));
    }
    // Right after recall-like searches LanceDB scans a few vectors at a time: the answers stay the same, in order.
    const whileSearched = await index.searchMany(queries, filter, 7);
    expect(whileSearched.map((hits) => hits.map((h) => h.id))).toEqual(many.map((hits) => hits.map((h) => h.id)));
    expect(await index.searchMany([], filter, 7)).toEqual([]);
    expect(await index.searchMany(queries, { ...filter, tags: [] }, 7)).toEqual([[], [], [], [], []]);
  });

  it("replaces a record on re-upsert: vector and filter columns", async () => {
    const index = await open();
    const rand = prng(2);
    const records = Array.from({ length: 50 }, (_, i) => record(rand, i));
    await index.upsert(records);
    const replaced = record(rand, 7, { type: "decision", tags: ["new"] });
    await index.upsert([replaced]);
    expect(await index.count()).toBe(50);

    const [hit] = await index.search(replaced.vector, { workspaceId: "ws_a", types: ["decision"] }, 5);
    expect(hit).toEqual({ id: replaced.id, similarity: expect.closeTo(1, 4) });
    const asFact = await index.search(replaced.vector, { workspaceId: "ws_a", types: ["fact"] }, 50);
    expect(asFact.map((h) => h.id)).not.toContain(replaced.id);
    // The same id twice in one batch: the last one wins.
    const last = record(rand, 8, { type: "event" });
    await index.upsert([record(rand, 8, { type: "skill" }), last]);
    const events = await index.search(last.vector, { workspaceId: "ws_a", types: ["event", "skill"] }, 5);
    expect(events).toEqual([{ id: last.id, similarity: expect.closeTo(1, 4) }]);
  });

  it("deletes by id, escaping ids that are not well formed", async () => {
    const index = await open();
    expect(await indexedIds(index)).toEqual(new Set());
    const rand = prng(3);
    const odd = ["mem_o'brien", "mem_back\\slash", "mem_'); drop table x; --"];
    const records = [
      ...Array.from({ length: 10 }, (_, i) => record(rand, i)),
      ...odd.map((id, i) => record(rand, 100 + i, { id })),
    ];
    await index.upsert(records);
    expect(await index.count()).toBe(13);
    await index.delete([records[0]!.id, ...odd, "mem_absent"]);
    expect(await index.count()).toBe(9);
    expect(await indexedIds(index)).toEqual(new Set(records.slice(1, 10).map((r) => r.id)));
    const hits = await index.search(records[0]!.vector, { workspaceId: "ws_a" }, 20);
    expect(hits.map((h) => h.id)).not.toContain(records[0]!.id);
    await index.delete([]);
    await index.upsert([]);
    expect(await index.count()).toBe(9);
  });

  it("gives rows indexed before metadata terms existed their terms when it opens, and keeps the rest of them", async () => {
    const rand = prng(11);
    const o = await backend.open();
    opened.push(o);
    const records = Array.from({ length: 6 }, (_, i) => record(rand, i, { content: `billing note ${i}`, metadataTerms: ["lost"] }));
    await o.index.upsert(records);
    const before = await o.index.search(records[0]!.vector, { workspaceId: "ws_a" }, 6);
    const terms = new Map([0, 1, 2].map((i) => [records[i]!.id, ["p"]]));
    terms.set(records[3]!.id, ["q"]);
    terms.set(records[5]!.id, []);
    let asked = 0;
    const termsOf = async (ids: string[]) => {
      asked += ids.length;
      return new Map(ids.flatMap((id) => (terms.has(id) ? [[id, terms.get(id)!] as const] : [])));
    };
    const index = await o.reopenWithoutTerms(termsOf);
    expect(asked).toBe(6);
    const p = { workspaceId: "ws_a", metadataTerms: ["p"] };
    expect((await index.search(records[0]!.vector, p, 6)).map((h) => h.id).sort()).toEqual(records.slice(0, 3).map((r) => r.id));
    // pgvector's keyword search reads the memories table, which this bare database lacks.
    if (backend.name === "lancedb") {
      expect((await index.keywordSearch("billing", p, 6, false)).map((h) => h.id).sort()).toEqual(records.slice(0, 3).map((r) => r.id));
    }
    expect(await index.search(records[0]!.vector, { workspaceId: "ws_a", metadataTerms: ["lost"] }, 6)).toEqual([]);
    // Vectors and every other column are as they were.
    expect(await index.search(records[0]!.vector, { workspaceId: "ws_a" }, 6)).toEqual(before);
  });

  it("applies every filter field inside the index", async () => {
    const index = await open();
    const rand = prng(4);
    const pick = <T>(values: readonly T[]) => values[Math.floor(rand() * values.length)]!;
    const records = Array.from({ length: 400 }, (_, i) =>
      record(rand, i, {
        workspaceId: pick(["ws_a", "ws_a", "ws_b"]),
        containers: pick([["main"], ["ops"], ["main", "ops"], ["docs"]]),
        type: pick(["fact", "decision", "event"]),
        tags: pick([[], ["red"], ["blue"], ["red", "green"]]),
        severity: pick([null, "low", "high", "critical"]),
        confidence: pick([0.2, 0.5, 0.7, 0.9, 1]),
        state: pick(["active", "active", "shadowed"]),
        validFrom: t0 + pick([0, 10, 20]) * day,
        validUntil: pick([null, t0 + 15 * day, t0 + 30 * day]),
        createdAt: t0 + (i % 40) * day,
      }),
    );
    await index.upsert(records);
    const ws = { workspaceId: "ws_a" };
    const filters: VectorFilter[] = [
      ws,
      { workspaceId: "ws_b" },
      { workspaceId: "ws_c" },
      { ...ws, containers: ["ops"] },
      { ...ws, containers: ["docs", "ops"] },
      { ...ws, types: ["decision"] },
      { ...ws, types: ["decision", "event"] },
      { ...ws, tags: ["red"] },
      { ...ws, tags: ["green", "blue"] },
      { ...ws, severities: ["high", "critical"] },
      { ...ws, minConfidence: 0.7 },
      { ...ws, states: ["active"] },
      { ...ws, createdAfter: t0 + 10 * day },
      { ...ws, createdBefore: t0 + 10 * day },
      { ...ws, createdAfter: t0 + 5 * day, createdBefore: t0 + 8 * day },
      { ...ws, validAt: t0 + 5 * day }, // only rows valid from t0; open-ended and bounded
      { ...ws, validAt: t0 + 15 * day }, // a window ending exactly now is over
      { ...ws, validAt: t0 + 20 * day }, // a window starting exactly now has begun
      { ...ws, validAt: t0 + 40 * day }, // only open-ended windows
      {
        ...ws,
        containers: ["main"],
        types: ["fact", "event"],
        tags: ["red"],
        severities: ["low", "high"],
        minConfidence: 0.5,
        states: ["active"],
        createdAfter: t0,
        createdBefore: t0 + 35 * day,
        validAt: t0 + 12 * day,
      },
    ];
    // First on the rows as written, then after optimize(): LanceDB then filters through its scalar indexes.
    for (const optimized of [false, true]) {
      if (optimized) await index.optimize();
      for (const filter of filters) {
        const query = unitVector(rand);
        const expected = bruteForce(records, query, filter, 400);
        const got = await expectExact(index, records, query, filter, 400);
        expect(got.length, JSON.stringify({ optimized, filter })).toBe(expected.length);
        // And with a small k, the top of that list.
        await expectExact(index, records, query, filter, 5);
      }
    }
    // Filters that must have admitted something, so the comparisons above were not vacuous.
    expect(bruteForce(records, unitVector(rand), { ...ws, validAt: t0 + 40 * day }, 400).length).toBeGreaterThan(0);
    for (const empty of [{ containers: [] }, { types: [] }, { tags: [] }]) {
      expect(await index.search(unitVector(rand), { ...ws, ...empty }, 10)).toEqual([]);
    }
  });

  it("finds every match of a selective filter, before and after the ANN index exists", async () => {
    const index = await open({ annThreshold: 1000 });
    const o = opened.at(-1)!;
    const rand = prng(5);
    const embedding = topicVectors(rand, 40);
    const records = Array.from({ length: 3000 }, (_, i) =>
      record(rand, i, { containers: i % 600 === 0 ? ["rare"] : i % 10 === 1 ? ["tenth"] : ["common"], vector: embedding() }),
    );
    await index.upsert(records);
    const rare = { workspaceId: "ws_a", containers: ["rare"] };
    const queries = Array.from({ length: 5 }, embedding);
    for (const q of queries) expect(await expectExact(index, records, q, rare, 10)).toHaveLength(5);

    await index.optimize();
    expect(await o.hasAnnIndex()).toBe(true);
    for (const q of queries) expect(await expectExact(index, records, q, rare, 10)).toHaveLength(5);
    // A filter broad enough for the ANN index to be used still yields k matching rows, and (nearly) the exact ones.
    const tenth = { workspaceId: "ws_a", containers: ["tenth"] };
    let found = 0;
    for (const q of queries) {
      const exact = new Set(bruteForce(records, q, tenth, 10).map((h) => h.id));
      const hits = await index.search(q, tenth, 10);
      expect(hits).toHaveLength(10);
      expect(hits.every((h) => Number(h.id.slice(4)) % 10 === 1)).toBe(true);
      found += hits.filter((h) => exact.has(h.id)).length;
    }
    expect(found / 50).toBeGreaterThanOrEqual(0.9);

    // Rows written after the index was built are found too.
    const late = record(rand, 5000, { containers: ["rare"] });
    records.push(late);
    await index.upsert([late]);
    for (const q of queries) expect(await expectExact(index, records, q, rare, 10)).toHaveLength(6);
    await index.optimize();
    for (const q of queries) expect(await expectExact(index, records, q, rare, 10)).toHaveLength(6);
    expect(await index.count()).toBe(3001);
    expect((await indexedIds(index)).size).toBe(3001);
  });

  it("finds every match of a selective filter exactly when the index probes only some of its partitions", async () => {
    // 12,000 rows: 110 partitions, of which a search probes 38; 24 rows in the rare container, spread over the topics.
    const index = await open({ annThreshold: 1000 });
    const rand = prng(12);
    const embedding = topicVectors(rand, 60);
    const records = Array.from({ length: 12_000 }, (_, i) => record(rand, i, { containers: i % 500 === 7 ? ["rare"] : ["common"], vector: embedding() }));
    await index.upsert(records);
    await index.optimize();
    expect(await opened.at(-1)!.hasAnnIndex()).toBe(true);
    const rare = { workspaceId: "ws_a", containers: ["rare"] };
    for (const q of Array.from({ length: 5 }, embedding)) expect(await expectExact(index, records, q, rare, 40)).toHaveLength(24);
    // Writing and indexing 12,000 rows in pgvector on PGlite took 45 s on a 2 GHz core (2026-11).
  });

  it("keeps writing while optimize runs", async () => {
    const index = await open({ annThreshold: 500 });
    const rand = prng(6);
    const records = Array.from({ length: 1000 }, (_, i) => record(rand, i));
    await index.upsert(records.slice(0, 800));
    await Promise.all([
      index.optimize(),
      ...[0, 1, 2, 3].map((b) => index.upsert(records.slice(800 + b * 50, 850 + b * 50))),
      index.delete([records[0]!.id]),
    ]);
    expect(await index.count()).toBe(999);
    // Uniform random vectors: the ANN index finds near neighbours, not necessarily the exact ones.
    const hits = await index.search(unitVector(rand), { workspaceId: "ws_a" }, 10);
    expect(hits).toHaveLength(10);
    const live = new Set(records.slice(1).map((r) => r.id));
    expect(hits.every((h) => live.has(h.id))).toBe(true);
  });
});

describe("LanceDB keyword search", () => {
  const topics = ["kubernetes deploy failed", "postgres vacuum tuning", "coffee with Alice in Lisbon", "error ZX-4711 in payments"];
  let dir: string;
  let index: VectorIndex;
  afterEach(async () => {
    await index.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("ranks by BM25 within the filter, returns stored vectors, and sees rows written after the last optimize", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-fts-"));
    index = await openLanceIndex({ uri: dir, dimensions: dims });
    const rand = prng(9);
    const records = Array.from({ length: 400 }, (_, i) =>
      record(rand, i, {
        content: `note ${i}: ${topics[i % topics.length]}${i % 40 === 0 ? " and the deploy was rolled back" : ""}`,
        containers: i % 2 === 0 ? ["even"] : ["odd"],
        workspaceId: i % 100 === 99 ? "ws_b" : "ws_a",
      }),
    );
    await index.upsert(records);
    await index.optimize();

    const hits = await index.keywordSearch("Deploys failing on Kubernetes", { workspaceId: "ws_a", containers: ["even"] }, 20, true);
    expect(hits).toHaveLength(20);
    const byId = new Map(records.map((r) => [r.id, r]));
    for (const h of hits) {
      const r = byId.get(h.id)!;
      expect(r.workspaceId).toBe("ws_a");
      expect(r.containers).toEqual(["even"]);
      // Stemmed: "deploys failing" matches "deploy failed".
      expect(r.content).toMatch(/kubernetes deploy failed/);
      expect(h.bm25).toBeGreaterThan(0);
      // As stored: the fill after an optimize holds no 8-bit copies (see lanceRowCache).
      expect(cosine(h.vector!, r.vector)).toBeCloseTo(1, 5);
    }
    expect(hits.map((h) => h.bm25)).toEqual([...hits.map((h) => h.bm25)].sort((a, b) => b - a));
    // Asked without vectors: the same hits and scores, no vectors read.
    const bare = await index.keywordSearch("Deploys failing on Kubernetes", { workspaceId: "ws_a", containers: ["even"] }, 20, false);
    expect(bare).toEqual(hits.map((h) => ({ ...h, vector: null })));

    const late = record(rand, 1000, { content: "a zebra crossing on the moon", containers: ["even"] });
    await index.upsert([late]);
    expect((await index.keywordSearch("zebra", { workspaceId: "ws_a" }, 5, false)).map((h) => h.id)).toEqual([late.id]);
    expect(await index.keywordSearch("zebra", { workspaceId: "ws_a", containers: ["odd"] }, 5, false)).toEqual([]);
    await index.delete([late.id]);
    expect(await index.keywordSearch("zebra", { workspaceId: "ws_a" }, 5, false)).toEqual([]);
  });

  // LanceDB answers a filter matching at most LANCE_FLAT_SEARCH_PERCENT_THRESHOLD percent of the rows (ours:
  // 1) by visiting each of them, and a broader one by walking the postings: both must find the best matches.
  it("finds the best BM25 matches within filters of 0.5%, 3% and 25% of the rows", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-fts-"));
    index = await openLanceIndex({ uri: dir, dimensions: dims });
    expect(process.env.LANCE_FLAT_SEARCH_PERCENT_THRESHOLD).toBe(flatSearchPercent);
    const rand = prng(21);
    const filler = ["the", "deploy", "was", "slow", "again", "today", "kubernetes", "notes"];
    const records = Array.from({ length: 2000 }, (_, i) => {
      const words = Array.from({ length: 3 + (i % 17) }, (_, w) => filler[(i * 7 + w * 3) % filler.length]);
      return record(rand, i, { content: `${words.join(" ")} ${i}`, tags: [i % 200 === 0 ? "half-percent" : "any", i % 33 === 0 ? "three-percent" : "any", i % 4 === 0 ? "quarter" : "any"] });
    });
    await index.upsert(records);
    await index.optimize();
    const query = "kubernetes deploy slow";
    const everyMatch = await index.keywordSearch(query, { workspaceId: "ws_a" }, records.length, false);
    const tagsOf = new Map(records.map((r) => [r.id, r.tags]));
    for (const tag of ["half-percent", "three-percent", "quarter"]) {
      const expected = everyMatch.filter((h) => tagsOf.get(h.id)!.includes(tag)).slice(0, 10);
      const hits = await index.keywordSearch(query, { workspaceId: "ws_a", tags: [tag] }, 10, false);
      expect(hits.length, tag).toBe(expected.length);
      hits.forEach((h, i) => expect(h.bm25, `${tag} #${i}`).toBeCloseTo(expected[i]!.bm25, 3));
    }
  });

  it("ranks the best match first before the first optimize, when more rows match than asked for", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-fts-"));
    index = await openLanceIndex({ uri: dir, dimensions: dims });
    const rand = prng(4);
    // Written last, so a scan cut at the limit before ranking never reaches it.
    const notes = Array.from({ length: 30 }, (_, i) => record(rand, i, { content: `the editor theme of project ${i}` }));
    const ticket = record(rand, 30, { content: "ticket ZX-4711 about the editor" });
    await index.upsert([...notes, ticket]);
    const hits = await index.keywordSearch("editor ZX-4711", { workspaceId: "ws_a" }, 10, false);
    expect(hits).toHaveLength(10);
    expect(hits[0]!.id).toBe(ticket.id);
    expect(hits.map((h) => h.bm25)).toEqual([...hits.map((h) => h.bm25)].sort((a, b) => b - a));
    // With vectors: the same hits, each with its own stored vector.
    const byId = new Map([...notes, ticket].map((r) => [r.id, r.vector]));
    const withVectors = await index.keywordSearch("editor ZX-4711", { workspaceId: "ws_a" }, 10, true);
    expect(withVectors.map((h) => ({ ...h, vector: null }))).toEqual(hits);
    for (const h of withVectors) expect(h.vector).toEqual(byId.get(h.id));
    await index.optimize();
    expect((await index.keywordSearch("editor ZX-4711", { workspaceId: "ws_a" }, 10, false))[0]!.id).toBe(ticket.id);
  });

  it("replaces a full-text index built with an earlier analyser, after which stop words no longer score", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-fts-"));
    // The table as an earlier version left it: LanceDB's built-in English stop words, stemmed first.
    const earlier = await connect(dir);
    const table = await earlier.createEmptyTable(`memories_v2_${dims}`, lanceSchema(dims));
    await table.add(toArrowTable(lanceSchema(dims), dims, [record(prng(2), 1, { content: "The user is vegetarian and does not eat fish" })]));
    await table.createIndex("content", { config: Index.fts({ language: "English", stem: true, removeStopWords: true, withPosition: false }) });
    expect(await table.query().fullTextSearch(new MatchQuery("does", "content")).select(["id"]).toArray()).toHaveLength(1);
    table.close();
    earlier.close();

    index = await openLanceIndex({ uri: dir, dimensions: dims });
    expect(await index.keywordSearch("does", { workspaceId: "ws_a" }, 5, false)).toEqual([]);
    expect(await index.keywordSearch("where does the user live", { workspaceId: "ws_a" }, 5, false)).toHaveLength(1);
    const reopened = await connect(dir);
    const indices = await (await reopened.openTable(`memories_v2_${dims}`)).listIndices();
    expect(indices.filter((i) => i.indexType === "FTS").map((i) => i.name)).toEqual(["content_fts_a2"]);
    reopened.close();
  });

  it("answers queries of stop words, punctuation or query syntax without failing", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-fts-"));
    index = await openLanceIndex({ uri: dir, dimensions: dims });
    await index.upsert([record(prng(1), 1, { content: "error ZX-4711 in payments" })]);
    for (const q of ["the of and", "", '"unbalanced (quote: AND -x OR', "*?~^"]) {
      expect(await index.keywordSearch(q, { workspaceId: "ws_a" }, 5, false)).toEqual([]);
    }
    expect(await index.keywordSearch("zx-4711", { workspaceId: "ws_a" }, 5, false)).toHaveLength(1);
    // Quoted words are words, not a phrase query (which an index without positions refuses).
    expect(await index.keywordSearch('"payments"', { workspaceId: "ws_a" }, 5, false)).toHaveLength(1);
    expect(await index.keywordSearch('"a" "b"', { workspaceId: "ws_a" }, 5, false)).toEqual([]);
  });
});

describe("pgvector's optimize()", () => {
  interface VacuumedIndex<R> {
    upsert(records: R[]): Promise<void>;
    delete(ids: string[]): Promise<void>;
    optimize(): Promise<void>;
    count(): Promise<number>;
  }
  const skillRecord = (rand: () => number, i: number): SkillVectorRecord => ({
    id: `skl_${i}`,
    workspaceId: "ws",
    containers: ["*"],
    tags: [],
    maturity: "stable",
    state: "active",
    marketplace: false,
    text: `skill ${i}`,
    vector: record(rand, i).vector,
  });

  function vacuumsByTheRule<R extends { id: string }>(
    table: string,
    open: (db: Database) => Promise<VacuumedIndex<R>>,
    recordAt: (rand: () => number, i: number) => R,
  ) {
    it(`vacuums and analyses ${table} at the first call, then once a tenth of its rows was written since`, async () => {
      const db = await openPglite("memory://", { vector: true });
      try {
        let calls = 0;
        const vacuumedAtCall: number[] = [];
        const watched = watchedDatabase(db, (sql) => {
          if (/^vacuum \(analyze\)/.test(sql)) vacuumedAtCall.push(calls);
        });
        const index = await open(watched);
        const optimize = () => {
          calls++;
          return index.optimize();
        };
        const rand = prng(12);
        const records = Array.from({ length: 200 }, (_, i) => recordAt(rand, i));
        await index.upsert(records);
        await optimize(); // the first: vacuumed, with 200 rows
        await index.upsert(records.slice(0, 10)); // rewrites count: 10 of a tenth of 200
        await optimize();
        await index.delete(records.slice(10, 20).map((r) => r.id)); // deletes too: 20
        await optimize();
        await index.upsert([recordAt(rand, 500)]);
        await optimize(); // 1 written since, of a tenth of 190
        expect(vacuumedAtCall).toEqual([1, 3]);
        expect(await index.count()).toBe(191);
      } finally {
        await db.close();
      }
    });
  }

  vacuumsByTheRule("the memories' table", (db) => openPgvectorIndex(db, dims), record);
  vacuumsByTheRule("the skills' table", (db) => openPgvectorSkillIndex(db, dims), skillRecord);
});

describe("LanceDB across processes", () => {
  it("a second handle on the same directory sees the first one's writes within the consistency interval", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-test-"));
    const interval = 0.5;
    const writer = await openLanceIndex({ uri: dir, dimensions: dims, readConsistencySeconds: interval });
    const reader = await openLanceIndex({ uri: dir, dimensions: dims, readConsistencySeconds: interval });
    try {
      const rand = prng(7);
      const records = Array.from({ length: 20 }, (_, i) => record(rand, i));
      expect(await reader.count()).toBe(0);
      await writer.upsert(records);
      // A read checks for other processes' writes once its last check is older than the interval:
      // after waiting it out, the next read must see them (a lower bound only, so no race with a deadline).
      await new Promise((resolve) => setTimeout(resolve, interval * 1000 + 50));
      expect(await reader.count()).toBe(20);
      const [hit] = await reader.search(records[3]!.vector, { workspaceId: "ws_a" }, 1);
      expect(hit!.id).toBe(records[3]!.id);
    } finally {
      await writer.close();
      await reader.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("opens a location where another node has begun creating the tables (listed, no version yet)", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-test-"));
    // What a node starting at the same moment leaves for an instant: the table's directory and data, before its first version.
    for (const table of [`memories_v2_${dims}`, `skills_v1_${dims}`]) await mkdir(path.join(dir, `${table}.lance`, "data"), { recursive: true });
    try {
      const memories = await openLanceIndex({ uri: dir, dimensions: dims });
      const skills = await openLanceSkillIndex({ uri: dir, dimensions: dims });
      expect([await memories.count(), await skills.count()]).toEqual([0, 0]);
      await memories.close();
      await skills.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  it("creates the full-text index once from two handles that do not look for each other's versions", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-test-"));
    // Connections without a read-consistency interval: as stale as object storage's handles can be for a second.
    const [a, b] = [await connect(dir), await connect(dir)];
    try {
      const first = await a.createEmptyTable("t", lanceSchema(dims));
      const second = await b.openTable("t");
      await ensureFullTextIndex(first, "content");
      // The second handle still sees no index: its create loses to the first's commit and must then find it.
      await ensureFullTextIndex(second, "content");
      expect((await second.listIndices()).filter((i) => i.indexType === "FTS")).toHaveLength(1);
    } finally {
      a.close();
      b.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("LanceDB scalar indexes", () => {
  it("gives created_at a B-tree once optimized, so a recall's time window is answered from an index", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-scalar-"));
    const index = await openLanceIndex({ uri: dir, dimensions: dims });
    try {
      await index.upsert(Array.from({ length: 20 }, (_, i) => record(prng(8), i)));
      await index.optimize();
      const conn = await connect(dir);
      const indices = await (await conn.openTable(`memories_v2_${dims}`)).listIndices();
      conn.close();
      expect(indices.filter((i) => i.columns.includes("created_at")).map((i) => i.indexType)).toEqual(["BTree"]);
    } finally {
      await index.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("LanceDB's temp directory", () => {
  it("is the process's own, and index builds leave nothing in it", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-builds-"));
    const index = await openLanceIndex({ uri: dir, dimensions: dims });
    try {
      const scratch = process.env.TMPDIR!;
      expect(path.basename(scratch)).toBe(`agentmem-lance-scratch-${os.hostname()}-${process.pid}`);
      const rand = prng(21);
      // Past the ANN threshold: optimize() builds the IVF index, whose shuffle LanceDB 0.37 leaves behind.
      await index.upsert(Array.from({ length: 2000 }, (_, i) => record(rand, i)));
      await index.optimize();
      const conn = await connect(dir);
      const indices = await (await conn.openTable(`memories_v2_${dims}`)).listIndices();
      conn.close();
      expect(indices.some((i) => i.columns.includes("vector"))).toBe(true);
      const shuffles = [];
      for (const name of await readdir(scratch)) {
        if (name.startsWith(".tmp")) shuffles.push(...(await readdir(path.join(scratch, name))).filter((f) => f.startsWith("shuffle_")));
      }
      expect(shuffles).toEqual([]);
    } finally {
      await index.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("optimize() during a batch ingest on one handle", () => {
  it("never fails: compaction and the writes it races are serialised or retried", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-optimize-ingest-"));
    const index = await openLanceIndex({ uri: dir, dimensions: dims, annThreshold: 256 });
    try {
      const rand = prng(5);
      await index.upsert(Array.from({ length: 300 }, (_, i) => record(rand, i)));
      // Batches that update existing rows (mergeInsert: an Update) while optimize() compacts (a Rewrite).
      const ingest = (async () => {
        for (let b = 0; b < 30; b++) await index.upsert(Array.from({ length: 32 }, (_, i) => record(rand, (b * 32 + i) % 400)));
      })();
      const optimizing = (async () => {
        for (let n = 0; n < 6; n++) await index.optimize();
      })();
      await Promise.all([ingest, optimizing]);
      expect(await index.count()).toBe(400);
    } finally {
      await index.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("compact() against a writer that wins every race", () => {
  // Lance's own words when a merge-insert lands during a compaction (from a server log).
  const preempted = () =>
    new Error("Retryable commit conflict for version 41: This Rewrite transaction was preempted by concurrent transaction Update at version 41. Please retry.");

  it("gives up racing after two tries and compacts with this handle's writes held back", async () => {
    const writes = serialQueue();
    const order: string[] = [];
    let attempts = 0;
    let writeDuringHold: Promise<void> | undefined;
    await compact(async () => {
      attempts++;
      if (attempts <= 2) throw preempted();
      // Held: a write submitted now runs only once this compaction has committed.
      writeDuringHold = writes(async () => void order.push("write"));
      await new Promise((resolve) => setImmediate(resolve));
      order.push("compaction");
    }, writes);
    await writeDuringHold;
    expect(attempts).toBe(3);
    expect(order).toEqual(["compaction", "write"]);
  });

  it("lets writes through while it races, and throws any other error at once", async () => {
    const writes = serialQueue();
    let attempts = 0;
    await compact(async () => {
      attempts++;
      // Not held yet: a write submitted during a racing try completes before the try returns.
      await writes(async () => undefined);
      if (attempts === 1) throw preempted();
    }, writes);
    expect(attempts).toBe(2);

    let broken = 0;
    await expect(
      compact(async () => {
        broken++;
        throw new Error("IO error: disk full");
      }, writes),
    ).rejects.toThrow("disk full");
    expect(broken).toBe(1);
  });
});

describe("close() with searches in flight", () => {
  it("lets searches begun before close() finish on an open table, and refuses later ones clearly", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-close-search-"));
    const index = await openLanceIndex({ uri: dir, dimensions: dims });
    try {
      const rand = prng(11);
      await index.upsert(Array.from({ length: 300 }, (_, i) => record(rand, i)));
      const query = unitVector(rand);
      // k above the row count: each search runs a second, exhaustive scan after the first one returns.
      const searches = Array.from({ length: 8 }, () => index.search(query, { workspaceId: "ws_a" }, 1000).then((h) => h.length, String));
      const keyword = index.keywordSearch("memory", { workspaceId: "ws_a" }, 10, false).then(() => "ok", String);
      await index.close();
      expect(await Promise.all(searches)).toEqual(Array.from({ length: 8 }, () => 300));
      expect(await keyword).toBe("ok");
      await expect(index.search(query, { workspaceId: "ws_a" }, 5)).rejects.toThrow("the LanceDB vector index is closed");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("close()", () => {
  it("releases everything, so a process that used both backends exits", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-close-test-"));
    const script = path.join(dir, "use-and-close.mts");
    const src = (file: string) => JSON.stringify(path.join(repoRoot, "src", file));
    await writeFile(
      script,
      `import { openPglite } from ${src("db/pglite.ts")};
       import { openLanceIndex } from ${src("search/vector/lancedb-index.ts")};
       import { openPgvectorIndex } from ${src("search/vector/pgvector-index.ts")};
       const db = await openPglite("memory://", { vector: true });
       const indexes = [await openLanceIndex({ uri: ${JSON.stringify(path.join(dir, "lance"))}, dimensions: 2 }), await openPgvectorIndex(db, 2)];
       const r = { id: "mem_1", workspaceId: "w", containers: ["c"], type: "fact", tags: [], severity: null, confidence: 1,
         state: "active", validFrom: 0, validUntil: null, createdAt: 0, metadataTerms: [], vector: new Float32Array([1, 0]) };
       for (const index of indexes) {
         await index.upsert([r]);
         await index.search(r.vector, { workspaceId: "w" }, 1);
         await index.optimize();
         await index.close();
       }
       await db.close();
       console.log("closed");`,
    );
    try {
      const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      const exited = await new Promise<number | null>((resolve) => {
        // A stall guard, not a speed check: under a loaded full suite the child took over 20 s to load.
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          resolve(null);
        }, startsProcessesTimeoutMs - 10_000);
        child.on("exit", (code) => {
          clearTimeout(timer);
          resolve(code);
        });
      });
      expect(out).toContain("closed");
      expect(exited).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, startsProcessesTimeoutMs);
});

describe("probes of the LanceDB ANN index", () => {
  it("probes every partition up to about 4,096 rows, then enough for 4,096 rows, never fewer than 20", () => {
    expect(probesFor(32, 1_024)).toBe(32);
    expect(probesFor(64, 4_096)).toBe(64);
    // An index trained on 4,096 rows, its table grown to 10k: 27 of 64 partitions hold about 4,096 rows.
    expect(probesFor(64, 10_000)).toBe(27);
    expect(probesFor(316, 100_000)).toBe(20);
    expect(probesFor(1_024, 1_000_000)).toBe(20);
    expect(probesFor(16, 300)).toBe(16);
  });

  it("probes at least the index kind's minimum: a quantized index twice LanceDB's 20", () => {
    expect(probesFor(1_024, 1_000_000, 40)).toBe(40);
    expect(probesFor(548, 300_000, 40)).toBe(40);
    expect(probesFor(32, 1_024, 40)).toBe(32);
    expect(probesFor(362, 131_072, 40)).toBe(40);
  });

  it("answers exactly through the index below 4,096 rows, even on uniform random vectors", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-ann-probes-"));
    const index = await openLanceIndex({ uri: dir, dimensions: dims });
    try {
      const rand = prng(21);
      const records = Array.from({ length: 1_500 }, (_, i) => record(rand, i));
      await index.upsert(records);
      await index.optimize();
      const db = await connect(dir);
      const table = await db.openTable((await db.tableNames())[0]!);
      expect((await table.listIndices()).some((i) => i.indexType === "IvfFlat")).toBe(true);
      table.close();
      db.close();
      // With LanceDB's 20 of the 39 partitions, uniform vectors lose about a third of their neighbours.
      for (let q = 0; q < 10; q++) await expectExact(index, records, unitVector(rand), { workspaceId: "ws_a" }, 10);
    } finally {
      await index.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("answers exactly through an IVF_FLAT index probed whole, repeating a short search only when probes leave partitions out", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-ann-repeat-"));
    const db = await connect(dir);
    try {
      const rand = prng(35);
      const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `r${i}`, vector: Array.from(unitVector(rand)) }));
      // Named as the index code names its indexes: 16 partitions over 2,000 rows are all probed; 64 over 5,000 are not (53 are).
      const whole = await db.createTable("whole", rows(2_000));
      await whole.createIndex("vector", { config: Index.ivfFlat({ distanceType: "cosine", numPartitions: 16 }), name: "vector_ivf_flat_p16" });
      const partial = await db.createTable("partial", rows(5_000));
      await partial.createIndex("vector", { config: Index.ivfFlat({ distanceType: "cosine", numPartitions: 64 }), name: "vector_ivf_flat_p64" });
      const quantized = await db.createTable("quantized", rows(2_000));
      await quantized.createIndex("vector", { config: Index.ivfRq({ distanceType: "cosine", numPartitions: 16 }), name: "vector_ivf_rq_p16" });
      const none = await db.createTable("none", rows(100));
      const searcher = async (table: Table) => {
        const ann = await annSearch(table);
        ann.stop();
        // The scans one search runs, each exhaustive or not; every scan comes back short, with `found` rows.
        return async (filterKey: string, found = 0) => {
          const exhaustive: boolean[] = [];
          await ann.nearestThenExact([unitVector(rand)], 40, filterKey, async (vectors, exact) => {
            exhaustive.push(exact);
            return vectors.map(() => Array.from({ length: found }, (_, i) => ({ id: `r${i}`, similarity: 0.5 })));
          });
          return exhaustive;
        };
      };
      expect(await (await searcher(whole))("f")).toEqual([false]);
      expect(await (await searcher(none))("f")).toEqual([false]);
      const partialScans = await searcher(partial);
      expect(await partialScans("rare")).toEqual([false, true]);
      // A filter answered far short is searched exactly at once, 32 times, then probed again.
      for (let i = 0; i < 32; i++) expect(await partialScans("rare")).toEqual([true]);
      expect(await partialScans("rare")).toEqual([false, true]);
      expect(await partialScans("other")).toEqual([false, true]);
      // Short by less than half of k: probed again next time, as most such searches are answered in full.
      expect(await partialScans("broad", 20)).toEqual([false, true]);
      expect(await partialScans("broad", 20)).toEqual([false, true]);
      expect(await partialScans("broad", 19)).toEqual([false, true]);
      expect(await partialScans("broad", 19)).toEqual([true]);
      const plan = async (table: Table, exhaustive: boolean) => {
        const ann = await annSearch(table);
        ann.stop();
        return ann.configure(table.vectorSearch(unitVector(rand)).distanceType("cosine"), exhaustive).explainPlan();
      };
      expect(await plan(partial, false)).toMatch(/ANNIvfPartition: .*minimum_nprobes=53,/);
      // An index probed whole: every partition, named by the most any index of ours has.
      expect(await plan(whole, false)).toMatch(/ANNIvfPartition: .*minimum_nprobes=1024,/);
      // The exact pass, and a table without an index, scan the rows that pass the filter.
      for (const table of [partial, whole, quantized]) expect(await plan(table, true)).toMatch(/KNNVectorDistance/);
      expect(await plan(partial, true)).not.toMatch(/ANNIvfPartition/);
      expect(await plan(none, false)).toMatch(/KNNVectorDistance/);
      for (const table of [whole, partial, quantized, none]) table.close();
    } finally {
      db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("quantizes the index (IVF_RQ) once its vectors outgrow quantizeFromBytes, and re-ranks by the exact vectors", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-ann-rq-"));
    // 1,100 rows of 32 dimensions are 140,800 bytes of vectors, 1,500 are 192,000.
    const index = await openLanceIndex({ uri: dir, dimensions: dims, quantizeFromBytes: 150_000 });
    const db = await connect(dir);
    try {
      const rand = prng(33);
      const near = topicVectors(rand, 12);
      const records = Array.from({ length: 1_500 }, (_, i) => record(rand, i, { vector: near() }));
      const vectorIndexes = async () => {
        const table = await db.openTable((await db.tableNames())[0]!);
        const found = (await table.listIndices()).filter((i) => i.columns.includes("vector")).map((i) => i.indexType);
        table.close();
        return found;
      };
      await index.upsert(records.slice(0, 1_100));
      await index.optimize();
      expect(await vectorIndexes()).toEqual(["IvfFlat"]);
      await index.upsert(records.slice(1_100));
      await index.optimize();
      // Rebuilt quantized although the partitions it wants have not doubled, and the flat index dropped.
      expect(await vectorIndexes()).toEqual(["IvfRq"]);
      let agreement = 0;
      for (let q = 0; q < 20; q++) {
        const query = near();
        const expected = bruteForce(records, query, { workspaceId: "ws_a" }, 10);
        const got = await index.search(query, { workspaceId: "ws_a" }, 10);
        expect(got).toHaveLength(10);
        // Refined: every similarity returned is the exact cosine of the stored vector.
        expect(similarityError(records, query, got)).toBeLessThan(1e-4);
        agreement += got.filter((h) => expected.some((e) => e.id === h.id)).length / 10;
      }
      expect(agreement / 20).toBeGreaterThan(0.8);
    } finally {
      db.close();
      await index.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("follows a quantized rebuild made through another handle, as a node that does not maintain the index must", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-ann-follow-"));
    const options = { uri: dir, dimensions: dims, quantizeFromBytes: 150_000 };
    const maintainer = await openLanceIndex(options);
    let follower: VectorIndex | undefined;
    try {
      const rand = prng(34);
      const near = topicVectors(rand, 12);
      const records = Array.from({ length: 1_500 }, (_, i) => record(rand, i, { vector: near() }));
      await maintainer.upsert(records.slice(0, 1_100));
      await maintainer.optimize();
      // Opened on the IVF_FLAT index; the maintainer then rebuilds it as IVF_RQ.
      follower = await openLanceIndex({ ...options, annRefreshMs: 50 });
      await maintainer.upsert(records.slice(1_100));
      await maintainer.optimize();
      const query = near();
      const reRanks = async (index: VectorIndex) => similarityError(records, query, await index.search(query, { workspaceId: "ws_a" }, 10)) < 1e-4;
      expect(await reRanks(maintainer)).toBe(true);
      // Until its next refresh the follower searches the new index without re-ranking; within seconds it re-ranks.
      const deadline = Date.now() + 20_000;
      while (!(await reRanks(follower)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await reRanks(follower)).toBe(true);
    } finally {
      await follower?.close();
      await maintainer.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
