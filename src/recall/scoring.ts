// Pure scoring policy for recall. Every number here is reported in the receipt's `why`.

import { keywordRelevance } from "../search/scoring.js";

export type SearchMode = "semantic" | "keyword" | "hybrid";
export type ValidityState = "active" | "expired" | "not_yet_valid" | "shadowed";

/**
 * Hybrid relevance: the evidence of both searches, `semantic` · cosine + (1 − `semantic`) · bm25/(bm25 + 12)
 * · coverageScale(query coverage), discounted for memories that say little: × (floor + (1 − floor) ·
 * informativeness²). The weights were chosen by `bench/fusion-fit.ts --grid` on the tuning splits of both
 * benchmarks (agent-facts dev questions, LoCoMo conversations 0-4) with use-lite embeddings, before the
 * coverage scale: the best of 618 rules by hit@1 + hit@5 on both sets with LoCoMo any@10 at least .73.
 * Informativeness as an added term (the earlier rule, 0.35 · cosine + 0.45 · keyword + 0.2 ·
 * informativeness) lifted long memories that matched nothing ("which city is the user based in now?"
 * answered by a note on branch names); as a discount it keeps short turns ("ok!", "me too"), which share a
 * word with many queries, down without raising what the searches did not find. Rank fusion and per-query
 * normalisation lose on LoCoMo, where a query's best keyword match is often weak.
 */
const hybridWeights = { semantic: 0.4, informativenessFloor: 0.6 };
/** Distinct terms (stemmed, stop words removed) at which a memory counts as fully informative. */
const informativeTerms = 24;

/** 0..1 from the number of distinct terms of a memory's content. */
export const informativeness = (terms: number): number => Math.min(1, Math.log1p(Math.max(0, terms)) / Math.log1p(informativeTerms));

/**
 * The share of the query's terms (as the keyword search analyses them: stemmed, stop words removed) that
 * a memory contains, 0..1; 0 for a query without terms.
 */
export const queryCoverage = (matchedTerms: number, queryTerms: number): number =>
  queryTerms <= 0 ? 0 : Math.min(1, Math.max(0, matchedTerms) / queryTerms);

/**
 * What hybrid recall keeps of the keyword evidence given the query's coverage: from half, for a memory
 * that holds none of the query's terms, to all of it, for one that holds every term. BM25 sums the idf of
 * the terms matched, so a memory sharing one generic word of a longer question ("fix", "book", "job"),
 * rare in its container, outweighed one that answers it by meaning ("who can fix the leaking tap in her
 * apartment?" → a note on fixing a Flink timeout, over the landlord). Added after the weights were
 * fitted; `bench/fusion-fit.ts --grid` with and without it puts all of its ten best rules among those
 * with it, the fitted weights within .008 of the best (bench/README.md, Recall quality).
 */
export const coverageScale = (coverage: number): number => 0.5 + 0.5 * Math.min(1, Math.max(0, coverage));

/**
 * Relevance of a candidate from the search alone, 0..1. `coverage` (queryCoverage) scales the keyword
 * evidence in hybrid mode only.
 */
export function relevance(mode: SearchMode, cosine: number, bm25: number, informative: number, coverage: number): number {
  const semantic = Math.max(0, cosine);
  if (mode === "semantic") return semantic;
  if (mode === "keyword") return keywordRelevance(bm25);
  const evidence = hybridWeights.semantic * semantic + (1 - hybridWeights.semantic) * keywordRelevance(bm25) * coverageScale(coverage);
  return evidence * (hybridWeights.informativenessFloor + (1 - hybridWeights.informativenessFloor) * informative * informative);
}

const dayMs = 86_400_000;

/** Up to +10% for memories that became valid recently, halving every 30 days. */
export function recencyBoost(validFrom: Date, now: Date): number {
  const ageDays = Math.max(0, (now.getTime() - validFrom.getTime()) / dayMs);
  return 1 + 0.1 * 2 ** (-ageDays / 30);
}

const severityMultipliers: Readonly<Record<string, number>> = { low: 1, medium: 1.05, high: 1.1, critical: 1.2 };

export const severityMultiplier = (severity: string | null): number =>
  severity === null ? 1 : (severityMultipliers[severity] ?? 1);

/** A memory held with confidence c counts (0.5 + c/2) as much. */
export const confidenceMultiplier = (confidence: number): number => 0.5 + 0.5 * confidence;

export function validityState(
  m: { state: string; validFrom: Date; validUntil: Date | null },
  at: Date,
): ValidityState {
  if (m.state === "shadowed") return "shadowed";
  if (m.validFrom.getTime() > at.getTime()) return "not_yet_valid";
  if (m.validUntil !== null && m.validUntil.getTime() <= at.getTime()) return "expired";
  return "active";
}

/**
 * Contents that differ only in case, punctuation or spacing are the same memory for recall. A content
 * without a letter or digit ("???") keys as itself, trimmed, so distinct ones never all collapse to "";
 * it cannot collide with a normalised key, which holds only letters, digits and single spaces.
 */
export function duplicateKey(content: string): string {
  const key = content
    .toLowerCase()
    .replace(/['’]/g, "")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
  return key === "" ? content.trim() : key;
}
