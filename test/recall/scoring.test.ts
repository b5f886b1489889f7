import { describe, expect, it } from "vitest";
import { informativeness, relevance } from "../../src/recall/scoring.js";
import { cosine, keywordRelevance } from "../../src/search/scoring.js";

describe("recall scoring", () => {
  it("rates informativeness by distinct terms, from 0 up to 1 at 24 terms", () => {
    expect(informativeness(0)).toBe(0);
    expect(informativeness(1)).toBeCloseTo(Math.log(2) / Math.log(25), 12);
    expect(informativeness(3)).toBeLessThan(informativeness(12));
    expect(informativeness(24)).toBe(1);
    expect(informativeness(500)).toBe(1);
  });

  it("keeps semantic and keyword relevance pure, and fuses them with informativeness in hybrid mode", () => {
    expect(relevance("semantic", 0.8, 30, 0.1)).toBe(0.8);
    expect(relevance("semantic", -0.2, 0, 1)).toBe(0);
    expect(relevance("keyword", 0.8, 12, 1)).toBe(0.5);
    expect(relevance("hybrid", 0.8, 12, 0.5)).toBeCloseTo(0.35 * 0.8 + 0.45 * 0.5 + 0.2 * 0.5, 12);
    // A short memory with the same match loses to an informative one.
    expect(relevance("hybrid", 0.5, 8, informativeness(2))).toBeLessThan(relevance("hybrid", 0.5, 8, informativeness(20)));
    expect(relevance("hybrid", 1, 1e9, 1)).toBeLessThanOrEqual(1);
    expect(keywordRelevance(0)).toBe(0);
  });

  it("computes cosine similarity of unnormalised vectors, 0 for a zero vector", () => {
    expect(cosine(Float32Array.of(1, 0), Float32Array.of(2, 0))).toBeCloseTo(1, 12);
    expect(cosine(Float32Array.of(1, 0), Float32Array.of(0, 3))).toBe(0);
    expect(cosine(Float32Array.of(1, 1), Float32Array.of(-1, -1))).toBeCloseTo(-1, 12);
    expect(cosine(Float32Array.of(0, 0), Float32Array.of(1, 1))).toBe(0);
  });
});
