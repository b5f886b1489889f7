import { keywordRelevance } from "../search/scoring.js";

export type SkillSearchMode = "semantic" | "keyword" | "hybrid";

/**
 * Weight of keyword relevance in hybrid skill search; the rest is cosine similarity of the name and
 * description. Chosen on the dev split of bench/data/skills (the held-out quarter was not used).
 */
export const hybridKeywordWeight = 0.3;

/** How well a skill fits a query, 0..1. */
export function skillRelevance(mode: SkillSearchMode, cosine: number, bm25: number): number {
  const semantic = Math.max(0, cosine);
  if (mode === "semantic") return semantic;
  if (mode === "keyword") return keywordRelevance(bm25);
  return (1 - hybridKeywordWeight) * semantic + hybridKeywordWeight * keywordRelevance(bm25);
}
