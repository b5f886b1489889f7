// How many hits a search asks for when a filter is applied to its hits afterwards (a recall's metadata
// filter matching too many memories to prefilter the index by id). The first search over-fetches a little;
// the share of its hits the filter kept estimates the filter's selectivity near the query, and the next
// search asks for enough hits that the expected matches cover the pool with a margin. Each search at
// least doubles k and none exceeds maxK, so the rounds, and the work per recall, are bounded.

export interface OverfetchLimits {
  /** The first search asks for pool * firstFactor hits. */
  firstFactor: number;
  /** Expected matches are planned to be this many times the pool. */
  margin: number;
  /** The most hits one search asks for. */
  maxK: number;
}

export const defaultOverfetch: OverfetchLimits = { firstFactor: 4, margin: 1.5, maxK: 5000 };

/** One search: how many hits it asked for, how many it returned, how many of those the filter kept. */
export interface OverfetchRound {
  k: number;
  returned: number;
  kept: number;
}

export const firstSearchSize = (pool: number, limits: OverfetchLimits): number => Math.min(limits.maxK, Math.max(1, pool * limits.firstFactor));

/**
 * The k of the next search, or null when no search would find more: the pool is full, the search returned
 * fewer hits than asked (it saw every record passing the index's own filter), or k reached maxK.
 */
export function nextSearchSize(pool: number, last: OverfetchRound, limits: OverfetchLimits): number | null {
  if (last.kept >= pool || last.returned < last.k || last.k >= limits.maxK) return null;
  // None kept: the selectivity is below about one in `returned`, so that is the most hoped for.
  const selectivity = Math.max(last.kept, 1) / last.returned;
  const wanted = Math.ceil((pool * limits.margin) / selectivity);
  return Math.min(limits.maxK, Math.max(2 * last.k, wanted));
}
