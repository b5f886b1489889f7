import { keywordRelevance } from "../search/scoring.js";

export type SkillSearchMode = "semantic" | "keyword" | "hybrid";

/**
 * Weight of keyword relevance in hybrid skill search; the rest is cosine similarity of the embedded text.
 * Chosen on the dev split of bench/data/skills (the held-out quarter was not used): see the sweep that
 * bench/skill-search.ts prints.
 */
export const hybridKeywordWeight = 0.15;

/**
 * The default minimum similarity of a semantic or hybrid skill search: below it a skill is more likely
 * the wrong one than the right one, and an agent that loads the top skill should get none. Chosen on the
 * dev split of bench/data/skills as the highest floor that costs at most 0.02 of hit@1 (the sweep that
 * `npx tsx bench/skill-search.ts --quality-only` prints). Keyword search has no floor: its hits share words.
 */
export const defaultMinSimilarity = 0.3;

/** The minimum similarity a search in this mode applies unless the request names one. */
export const minSimilarityOf = (mode: SkillSearchMode): number => (mode === "keyword" ? 0 : defaultMinSimilarity);

/**
 * How well a skill fits a query, 0..1. In hybrid mode BM25 counts relative to the query's best keyword
 * match (`bestBm25`), so a query whose words are all rare weighs no more than one of common words.
 */
export function skillRelevance(mode: SkillSearchMode, cosine: number, bm25: number, bestBm25: number, keywordWeight = hybridKeywordWeight): number {
  const semantic = Math.max(0, cosine);
  if (mode === "semantic") return semantic;
  if (mode === "keyword") return keywordRelevance(bm25);
  return (1 - keywordWeight) * semantic + keywordWeight * (bestBm25 > 0 ? bm25 / bestBm25 : 0);
}
