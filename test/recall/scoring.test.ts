import { describe, expect, it } from "vitest";
import type { MemoryRecord } from "../../src/memories/memory-store.js";
import { matchesFilter } from "../../src/recall/filter-match.js";
import { pendingBm25, type PendingRow } from "../../src/recall/pending-candidates.js";
import { scoreCandidates, type ScoredCandidate } from "../../src/recall/recall-engine.js";
import { coverageScale, informativeness, queryCoverage, relevance } from "../../src/recall/scoring.js";
import { cosine, keywordRelevance } from "../../src/search/scoring.js";

describe("recall scoring", () => {
  it("rates informativeness by distinct terms, from 0 up to 1 at 24 terms", () => {
    expect(informativeness(0)).toBe(0);
    expect(informativeness(1)).toBeCloseTo(Math.log(2) / Math.log(25), 12);
    expect(informativeness(3)).toBeLessThan(informativeness(12));
    expect(informativeness(24)).toBe(1);
    expect(informativeness(500)).toBe(1);
  });

  it("keeps semantic and keyword relevance pure, and fuses them discounted by informativeness in hybrid mode", () => {
    expect(relevance("semantic", 0.8, 30, 0.1, 0.2)).toBe(0.8);
    expect(relevance("semantic", -0.2, 0, 1, 0)).toBe(0);
    expect(relevance("keyword", 0.8, 12, 1, 0.2)).toBe(0.5);
    expect(relevance("hybrid", 0.8, 12, 0.5, 1)).toBeCloseTo((0.4 * 0.8 + 0.6 * 0.5) * (0.6 + 0.4 * 0.25), 12);
    // A short memory with the same match loses to an informative one.
    expect(relevance("hybrid", 0.5, 8, informativeness(2), 1)).toBeLessThan(relevance("hybrid", 0.5, 8, informativeness(20), 1));
    expect(relevance("hybrid", 1, 1e9, 1, 1)).toBeLessThanOrEqual(1);
    // Informativeness discounts evidence; it never lifts a memory that neither search found.
    expect(relevance("hybrid", 0, 0, 1, 1)).toBe(0);
    expect(keywordRelevance(0)).toBe(0);
  });

  it("counts the share of the query's terms a memory holds", () => {
    expect(queryCoverage(0, 4)).toBe(0);
    expect(queryCoverage(1, 4)).toBe(0.25);
    expect(queryCoverage(3, 3)).toBe(1);
    // A query of stop words alone has no terms, and nothing matched it by keyword.
    expect(queryCoverage(0, 0)).toBe(0);
    expect(queryCoverage(5, 4)).toBe(1);
  });

  it("scales hybrid's keyword evidence from half (no share of the query) to all of it (every term)", () => {
    expect(coverageScale(0)).toBe(0.5);
    expect(coverageScale(0.5)).toBe(0.75);
    expect(coverageScale(1)).toBe(1);
    expect(coverageScale(-1)).toBe(0.5);
    expect(coverageScale(2)).toBe(1);
    const keyword = 0.6 * keywordRelevance(12);
    expect(relevance("hybrid", 0.8, 12, 1, 0.25)).toBeCloseTo(0.4 * 0.8 + keyword * 0.625, 12);
    // The cosine is not scaled: without a keyword match coverage changes nothing.
    expect(relevance("hybrid", 0.7, 0, 1, 0)).toBe(relevance("hybrid", 0.7, 0, 1, 1));
    // Keyword mode ranks by BM25 alone.
    expect(relevance("keyword", 0.3, 12, 1, 0.25)).toBe(relevance("keyword", 0.3, 12, 1, 1));
    // One rare generic word of four ("live") no longer outweighs a memory that answers by meaning.
    const generic = { cosine: 0.35, bm25: 9, coverage: 1 / 4 };
    const meaning = { cosine: 0.62, bm25: 2.5, coverage: 2 / 4 };
    const score = (c: typeof generic, cover: boolean) => relevance("hybrid", c.cosine, c.bm25, 1, cover ? c.coverage : 1);
    expect(score(generic, false)).toBeGreaterThan(score(meaning, false));
    expect(score(generic, true)).toBeLessThan(score(meaning, true));
  });

  it("computes cosine similarity of unnormalised vectors, 0 for a zero vector", () => {
    expect(cosine(Float32Array.of(1, 0), Float32Array.of(2, 0))).toBeCloseTo(1, 12);
    expect(cosine(Float32Array.of(1, 0), Float32Array.of(0, 3))).toBe(0);
    expect(cosine(Float32Array.of(1, 1), Float32Array.of(-1, -1))).toBeCloseTo(-1, 12);
    expect(cosine(Float32Array.of(0, 0), Float32Array.of(1, 1))).toBe(0);
  });
});

describe("BM25 of pending writes", () => {
  const row = (id: string, length: number, termFrequencies: Record<string, number>): PendingRow => ({ id, matches: true, vector: null, length, termFrequencies });
  const bm25 = (n: number, df: number, tf: number, length: number, avgdl: number) =>
    (Math.log(1 + (n - df + 0.5) / (df + 0.5)) * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * length) / avgdl));

  it("weighs a word by how many of the workspace's memories hold it, scaled from the sample", () => {
    const rows = [row("mem_a", 6, { user: 1 }), row("mem_b", 8, { user: 2, zebra: 1 })];
    const sample = { size: 1000, averageLength: 10, documentFrequencies: { user: 400, zebra: 0 } };
    const scores = pendingBm25({ rows, corpusSize: 10_000, sample });
    // "user": 400 of 1,000 sampled, so 4,000 of 10,000; "zebra": in no sampled memory, so only in the pending one.
    expect(scores.get("mem_a")).toBeCloseTo(bm25(10_000, 4000, 1, 6, 10), 9);
    expect(scores.get("mem_b")).toBeCloseTo(bm25(10_000, 4000, 2, 8, 10) + bm25(10_000, 1, 1, 8, 10), 9);
  });

  it("counts among the pending memories when no sample was read", () => {
    const rows = [row("mem_a", 6, { user: 1 }), row("mem_b", 10, {}), { ...row("mem_c", 4, { user: 3 }), matches: false }];
    const scores = pendingBm25({ rows, corpusSize: 50, sample: null });
    expect([...scores.keys()]).toEqual(["mem_a"]);
    expect(scores.get("mem_a")).toBeCloseTo(bm25(50, 1, 1, 6, 8), 9);
  });
});

describe("succession", () => {
  const memory = (id: string, supersededBy: string | null) =>
    ({ id, state: supersededBy ? "shadowed" : "active", supersededBy, severity: null, confidence: 1 }) as unknown as MemoryRecord;
  const candidate = (id: string, supersededBy: string | null, cos: number, found = true): ScoredCandidate => ({
    memory: memory(id, supersededBy),
    cosine: cos,
    bm25: 0,
    semantic: found,
    keyword: false,
    informativeness: 1,
    queryCoverage: 0,
    keywordMatches: [],
    matchedVia: "semantic",
    inheritedFrom: null,
    rerankScore: null,
    relevance: 0,
    recencyBoost: 1,
    severityMultiplier: 1,
    confidenceMultiplier: 1,
    finalScore: 0,
    validityState: supersededBy ? "shadowed" : "active",
    outcome: "returned",
  });

  it("gives the memory that replaced a candidate that candidate's relevance, to the end of a chain", () => {
    // a was replaced by b, b by c; c was not found by any search.
    const [a, b, c, other] = [candidate("a", "b", 0.9), candidate("b", "c", 0.3), candidate("c", null, 0, false), candidate("d", null, 0.5)];
    scoreCandidates([c!, b!, a!, other!], "semantic");
    expect(c!.relevance).toBeCloseTo(0.9, 12);
    expect(c!.inheritedFrom).toBe("a");
    expect(b!.inheritedFrom).toBe("a");
    expect(other!.inheritedFrom).toBeNull();
    expect(c!.finalScore).toBeGreaterThan(other!.finalScore);
  });

  it("keeps a successor's own relevance when it is higher", () => {
    const [a, b] = [candidate("a", "b", 0.2), candidate("b", null, 0.6)];
    scoreCandidates([a!, b!], "semantic");
    expect(b!.relevance).toBeCloseTo(0.6, 12);
    expect(b!.inheritedFrom).toBeNull();
  });
});

describe("filters applied to memories read from Postgres", () => {
  const m = {
    id: "mem_1",
    workspaceId: "ws",
    containers: ["a"],
    type: "fact",
    tags: ["x"],
    severity: "high",
    confidence: 0.7,
    state: "active",
    createdAt: new Date(2000),
    validFrom: new Date(1000),
    validUntil: new Date(5000),
  } as unknown as MemoryRecord;

  it("matches the index's filter semantics", () => {
    expect(matchesFilter(m, { workspaceId: "ws" })).toBe(true);
    expect(matchesFilter(m, { workspaceId: "other" })).toBe(false);
    expect(matchesFilter(m, { workspaceId: "ws", containers: ["b", "a"], types: ["fact"], tags: ["y", "x"], severities: ["high"] })).toBe(true);
    expect(matchesFilter(m, { workspaceId: "ws", containers: ["b"] })).toBe(false);
    expect(matchesFilter(m, { workspaceId: "ws", types: ["lesson"] })).toBe(false);
    expect(matchesFilter(m, { workspaceId: "ws", tags: ["y"] })).toBe(false);
    expect(matchesFilter(m, { workspaceId: "ws", severities: ["critical"] })).toBe(false);
    expect(matchesFilter(m, { workspaceId: "ws", minConfidence: 0.8 })).toBe(false);
    expect(matchesFilter(m, { workspaceId: "ws", createdAfter: 2000, createdBefore: 2001 })).toBe(true);
    expect(matchesFilter(m, { workspaceId: "ws", createdBefore: 2000 })).toBe(false);
    expect(matchesFilter(m, { workspaceId: "ws", validAt: 4999 })).toBe(true);
    expect(matchesFilter(m, { workspaceId: "ws", validAt: 5000 })).toBe(false);
  });
});
