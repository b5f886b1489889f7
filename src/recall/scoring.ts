// Pure scoring policy for recall. Every number here is reported in the receipt's `why`.

import { keywordRelevance } from "../search/scoring.js";

export type SearchMode = "semantic" | "keyword" | "hybrid";
export type ValidityState = "active" | "expired" | "not_yet_valid" | "shadowed";

/**
 * Hybrid relevance weights of the semantic side, the keyword side and informativeness. Tuned on the
 * LoCoMo tuning split (bench/recall-quality.ts, conversations 0-4) with use-lite embeddings: without
 * informativeness any@10 stays at .70 for every semantic/keyword balance and for rank fusion (RRF);
 * with it, .74 on the tuning split and .73 on the held-out one. Short memories ("ok!", "me too")
 * share a word with many queries and embed close to many of them, yet rarely hold the answer.
 */
const hybridWeights = { semantic: 0.35, keyword: 0.45, informativeness: 0.2 };
/** Distinct terms (stemmed, stop words removed) at which a memory counts as fully informative. */
const informativeTerms = 24;

/** 0..1 from the number of distinct terms of a memory's content. */
export const informativeness = (terms: number): number => Math.min(1, Math.log1p(Math.max(0, terms)) / Math.log1p(informativeTerms));

/** Relevance of a candidate from the search alone, 0..1. */
export function relevance(mode: SearchMode, cosine: number, bm25: number, informative: number): number {
  const semantic = Math.max(0, cosine);
  if (mode === "semantic") return semantic;
  if (mode === "keyword") return keywordRelevance(bm25);
  return (
    hybridWeights.semantic * semantic + hybridWeights.keyword * keywordRelevance(bm25) + hybridWeights.informativeness * informative
  );
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
