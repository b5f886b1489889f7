import { keywordRelevance } from "../search/scoring.js";

export type SkillSearchMode = "semantic" | "keyword" | "hybrid";

/**
 * Weight of keyword relevance in hybrid skill search; the rest is cosine similarity of the name and
 * description. Chosen on the dev split of bench/data/skills (the held-out quarter was not used), with
 * LanceDB's BM25: hit@1 0.29 at 0 to 0.1, 0.31 at 0.2, 0.20 at 0.3, 0.10 at 0.5. Its queries share no
 * word with their skill's description, so keywords help little there; a task naming a tool helps more.
 */
export const hybridKeywordWeight = 0.2;

/** How well a skill fits a query, 0..1. */
export function skillRelevance(mode: SkillSearchMode, cosine: number, bm25: number, keywordWeight = hybridKeywordWeight): number {
  const semantic = Math.max(0, cosine);
  if (mode === "semantic") return semantic;
  if (mode === "keyword") return keywordRelevance(bm25);
  return (1 - keywordWeight) * semantic + keywordWeight * keywordRelevance(bm25);
}
