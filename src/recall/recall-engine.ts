import type { Scope } from "../accounts/container-scope.js";
import type { Database } from "../db/database.js";
import { recheckCandidates, type CheckedCandidate, type RecalledMemory, type TermMatching } from "./candidate-store.js";
import { preferCurrentValues } from "./current-values.js";
import { matchesFilter } from "./filter-match.js";
import { withPending, type PendingReader } from "./pending-candidates.js";
import type { RecallQuery } from "./recall-rules.js";
import {
  confidenceMultiplier,
  duplicateKey,
  informativeness,
  queryCoverage,
  recencyBoost,
  relevance,
  severityMultiplier,
  validityState,
  type SearchMode,
  type ValidityState,
} from "./scoring.js";
import type { Reranker } from "./reranker.js";
import { countTokens } from "./tokens.js";
import { cosine } from "../search/scoring.js";
import type { KeywordHit, VectorFilter, VectorHit, VectorIndex } from "../search/vector/vector-index.js";

export type Outcome =
  | "returned"
  | "below_threshold"
  | "deduplicated"
  | "low_confidence"
  | "shadowed"
  | "outside_validity_window"
  | "over_token_budget"
  | "beyond_limit";

export interface ScoredCandidate {
  memory: RecalledMemory;
  cosine: number;
  bm25: number;
  /** Found by the semantic search / by the keyword search (neither: the successor of a shadowed candidate). */
  semantic: boolean;
  keyword: boolean;
  informativeness: number;
  /** Share of the query's terms the memory contains (hybrid weighs the keyword evidence by it; 0 in semantic mode). */
  queryCoverage: number;
  keywordMatches: string[];
  matchedVia: SearchMode;
  /** The shadowed candidate whose relevance this memory carries, as the memory that replaced it. */
  inheritedFrom: string | null;
  /** The reranker's score; null when the candidate was not reranked. */
  rerankScore: number | null;
  relevance: number;
  recencyBoost: number;
  severityMultiplier: number;
  confidenceMultiplier: number;
  finalScore: number;
  validityState: ValidityState;
  outcome: Outcome;
}

export interface RecallResult {
  /** Returned candidates, best first. */
  returned: ScoredCandidate[];
  /** Every candidate found in storage, with its outcome. */
  candidates: ScoredCandidate[];
  filtered: {
    belowThreshold: number;
    deduplicated: number;
    lowConfidence: number;
    outsideValidityWindow: number;
    overTokenBudget: number;
    shadowed: number;
  };
  tokens: number;
  embedMs: number;
  searchMs: number;
  /** The reranker ordered the best candidates (false without one, or when it failed). */
  rerankApplied: boolean;
}

export interface RecallEngineDeps {
  db: Database;
  vectors: VectorIndex;
  embedQuery(text: string): Promise<Float32Array>;
  /** Optional reranker over the best `rerankCandidates` fused candidates. */
  reranker?: Reranker | null;
  rerankCandidates?: number;
  /** Memories written but not indexed yet (read-your-writes). */
  readPending: PendingReader;
}

/** How many candidates each search contributes: enough headroom for filtering and deduplication. */
export const candidatePoolSize = (limit: number): number => Math.min(400, Math.max(40, limit * 4));

/** Candidates sent to the reranker unless RERANK_CANDIDATES says otherwise. */
export const defaultRerankCandidates = 30;

/** How many replacements recall follows from a shadowed candidate (A shadowed by B, B by C: two). */
const successionDepth = 3;

/**
 * The memories that replaced shadowed candidates, when the searches did not find them: a memory shadowed
 * by a contradiction was about the same thing as its successor, so a query it answers is one the
 * successor answers now ("where does the user live?" matches "lives in Berlin" better than "moved to
 * Munich"). Read from Postgres (so a successor not yet indexed is found too) and held to the request's
 * filters. One query per step of a chain, and none when no candidate is shadowed.
 */
async function loadSuccessors(
  deps: RecallEngineDeps,
  access: Scope,
  checked: CheckedCandidate[],
  filter: VectorFilter,
  keyword: TermMatching | null,
  metadata: RecallQuery["metadata"],
): Promise<CheckedCandidate[]> {
  if (!checked.some((c) => c.memory.state === "shadowed" && c.memory.supersededBy !== null)) return [];
  const found: CheckedCandidate[] = [];
  const have = new Set(checked.map((c) => c.memory.id));
  let frontier = checked;
  for (let depth = 0; depth < successionDepth; depth++) {
    const wanted = new Set<string>();
    for (const c of frontier) {
      const next = c.memory.supersededBy;
      if (c.memory.state === "shadowed" && next !== null && !have.has(next)) wanted.add(next);
    }
    if (wanted.size === 0) break;
    frontier = (await recheckCandidates(deps.db, access, [...wanted], keyword, metadata)).filter((c) => matchesFilter(c.memory, filter));
    for (const c of frontier) {
      have.add(c.memory.id);
      found.push(c);
    }
  }
  return found;
}

/** Searches, re-checks every candidate against Postgres, scores, filters and explains. */
export async function runRecall(deps: RecallEngineDeps, q: RecallQuery, access: Scope, filter: VectorFilter): Promise<RecallResult> {
  const started = performance.now();
  const pool = candidatePoolSize(q.limit);
  let embedMs = 0;
  const queryVector =
    q.mode === "keyword"
      ? undefined
      : deps.embedQuery(q.query).then((v) => {
          embedMs = performance.now() - started;
          return v;
        });
  // Pending writes are read before the index is searched: a memory the indexer moves from its job to the
  // index meanwhile is then in the index when searched, so a write is never missed by both.
  const pendingRead = deps.readPending(access, { filter, metadata: q.metadata, keywordQuery: q.mode === "semantic" ? null : q.query, vectors: q.mode !== "keyword" });
  const [indexedSemantic, indexedKeyword, vector, pending] = await Promise.all([
    queryVector ? Promise.all([queryVector, pendingRead]).then(([v]) => deps.vectors.search(v, filter, pool)) : ([] as VectorHit[]),
    q.mode === "semantic" ? ([] as KeywordHit[]) : pendingRead.then(() => deps.vectors.keywordSearch(q.query, filter, pool, queryVector !== undefined)),
    queryVector,
    pendingRead,
  ]);
  const { semantic: semanticHits, keyword: keywordHits } = withPending({ semantic: indexedSemantic, keyword: indexedKeyword }, pending, vector, pool);

  const cosineById = new Map<string, number>();
  for (const h of semanticHits) cosineById.set(h.id, h.similarity);
  const bm25ById = new Map<string, number>();
  for (const h of keywordHits) bm25ById.set(h.id, h.bm25);
  // A keyword-only hit is scored by its cosine too, from the vector the keyword search returned.
  const ids: string[] = semanticHits.map((h) => h.id);
  for (const h of keywordHits) {
    if (cosineById.has(h.id)) continue;
    ids.push(h.id);
    if (vector && h.vector) cosineById.set(h.id, cosine(vector, h.vector));
  }
  // Hybrid scoring weighs the keyword evidence by the share of the query's terms a candidate holds; the
  // words each candidate matched are shown only in receipts.
  const keyword = q.mode === "hybrid" || (q.mode === "keyword" && q.includeReceipt) ? { query: q.query, words: q.includeReceipt } : null;
  const checked = await recheckCandidates(deps.db, access, ids, keyword, q.metadata);
  const successors = await loadSuccessors(deps, access, checked, filter, keyword, q.metadata);
  const searchMs = performance.now() - started - embedMs;

  const now = new Date();
  const semanticIds = new Set<string>();
  for (const h of semanticHits) semanticIds.add(h.id);
  const candidates: ScoredCandidate[] = [];
  for (const { memory, keywordMatches, terms, queryTerms, matchedTerms } of successors.length > 0 ? [...checked, ...successors] : checked) {
    const bm25 = bm25ById.get(memory.id);
    const semantic = semanticIds.has(memory.id);
    candidates.push({
      memory,
      cosine: cosineById.get(memory.id) ?? 0,
      bm25: bm25 ?? 0,
      semantic,
      keyword: bm25 !== undefined,
      informativeness: informativeness(terms),
      queryCoverage: queryCoverage(matchedTerms, queryTerms),
      keywordMatches,
      matchedVia: semantic && bm25 !== undefined ? "hybrid" : bm25 !== undefined ? "keyword" : "semantic",
      inheritedFrom: null,
      rerankScore: null,
      relevance: 0,
      recencyBoost: recencyBoost(memory.validFrom, now),
      severityMultiplier: severityMultiplier(memory.severity),
      confidenceMultiplier: confidenceMultiplier(memory.confidence),
      finalScore: 0,
      validityState: validityState(memory, q.validAt),
      outcome: "returned",
    });
  }
  scoreCandidates(candidates, q.mode);
  preferCurrentValues(candidates, q.query);
  const rerankApplied = deps.reranker ? await rerank(deps.reranker, q, candidates, deps.rerankCandidates ?? defaultRerankCandidates) : false;
  return { ...selectResults(candidates, q), embedMs, searchMs, rerankApplied };
}

/**
 * Relevance from the searches, then succession: a memory that replaced a shadowed candidate is at least
 * as relevant as that candidate was (along a chain, up to its current end); then the multipliers.
 * Candidates are scored in place.
 */
export function scoreCandidates(candidates: ScoredCandidate[], mode: SearchMode): void {
  let replaced = false;
  for (const c of candidates) {
    c.relevance = relevance(mode, c.cosine, c.bm25, c.informativeness, c.queryCoverage);
    if (c.memory.state === "shadowed" && c.memory.supersededBy !== null) replaced = true;
  }
  if (replaced) inheritRelevance(candidates);
  for (const c of candidates) c.finalScore = c.relevance * c.recencyBoost * c.severityMultiplier * c.confidenceMultiplier;
}

function inheritRelevance(candidates: ScoredCandidate[]): void {
  const byId = new Map<string, ScoredCandidate>();
  for (const c of candidates) byId.set(c.memory.id, c);
  // A chain passes relevance one step per round; successionDepth rounds reach the end of any chain loaded.
  for (let round = 0; round < successionDepth; round++) {
    let changed = false;
    for (const c of candidates) {
      const next = c.memory.state === "shadowed" && c.memory.supersededBy !== null ? byId.get(c.memory.supersededBy) : undefined;
      if (next === undefined || next.relevance >= c.relevance) continue;
      next.relevance = c.relevance;
      next.inheritedFrom = c.inheritedFrom ?? c.memory.id;
      if (!next.semantic && !next.keyword) next.matchedVia = c.matchedVia;
      changed = true;
    }
    if (!changed) break;
  }
}

type Drop = "shadowed" | "outside_validity_window" | "low_confidence" | "below_threshold";
const dropCounters = {
  shadowed: "shadowed",
  outside_validity_window: "outsideValidityWindow",
  low_confidence: "lowConfidence",
  below_threshold: "belowThreshold",
} as const satisfies Record<Drop, keyof RecallResult["filtered"]>;

/** Why the request's filters drop a candidate (before deduplication, limit and budget), or null. */
function dropReason(c: ScoredCandidate, q: RecallQuery): Drop | null {
  if (c.validityState === "shadowed" && !q.includeShadowed) return "shadowed";
  // A shadowed memory kept by includeShadowed still has to be inside its validity window.
  const window = c.validityState === "shadowed" ? validityState({ ...c.memory, state: "active" }, q.validAt) : c.validityState;
  if (!(window === "active" || (window === "expired" && q.includeExpired))) return "outside_validity_window";
  if (c.memory.confidence < q.minConfidence) return "low_confidence";
  if (c.finalScore < q.threshold) return "below_threshold";
  return null;
}

/** Reranked candidates (the best fused ones) come first, in the reranker's order. */
function rerankedFirst(a: ScoredCandidate, b: ScoredCandidate): number {
  if (a.rerankScore === null) return b.rerankScore === null ? 0 : 1;
  return b.rerankScore === null ? -1 : b.rerankScore - a.rerankScore;
}

/**
 * Asks the reranker to order the best `count` fused candidates that the filters keep; true when it
 * answered (their rerankScore is then set), false when it failed and the fused order stands.
 */
export async function rerank(reranker: Reranker, q: RecallQuery, candidates: ScoredCandidate[], count: number): Promise<boolean> {
  const top = candidates
    .filter((c) => dropReason(c, q) === null)
    .sort((a, b) => b.finalScore - a.finalScore || (a.memory.id < b.memory.id ? -1 : 1))
    .slice(0, count);
  if (top.length === 0) return false;
  const scores = await reranker(q.query, top.map((c) => c.memory.content));
  if (scores === null) return false;
  top.forEach((c, i) => (c.rerankScore = scores[i]!));
  return true;
}

/** Applies shadowing, validity, confidence, threshold, deduplication, limit and token budget, counting each drop. */
export function selectResults(candidates: ScoredCandidate[], q: RecallQuery): Omit<RecallResult, "embedMs" | "searchMs" | "rerankApplied"> {
  const filtered = { belowThreshold: 0, deduplicated: 0, lowConfidence: 0, outsideValidityWindow: 0, overTokenBudget: 0, shadowed: 0 };
  const ranked = [...candidates].sort((a, b) => rerankedFirst(a, b) || b.finalScore - a.finalScore || (a.memory.id < b.memory.id ? -1 : 1));
  const seen = new Set<string>();
  const returned: ScoredCandidate[] = [];
  let tokens = 0;
  let budgetReached = false;
  for (const c of ranked) {
    const dropped = dropReason(c, q);
    if (dropped !== null) {
      c.outcome = dropped;
      filtered[dropCounters[dropped]]++;
      continue;
    }
    const key = duplicateKey(c.memory.content);
    if (seen.has(key)) {
      c.outcome = "deduplicated";
      filtered.deduplicated++;
      continue;
    }
    seen.add(key);
    if (returned.length >= q.limit) {
      c.outcome = "beyond_limit";
      continue;
    }
    // Counted when the version was written; only versions older than that count is stored are counted here.
    const cost = c.memory.contentTokens ?? countTokens(c.memory.content);
    if (budgetReached || (q.maxTokens !== null && tokens + cost > q.maxTokens)) {
      budgetReached = true;
      c.outcome = "over_token_budget";
      filtered.overTokenBudget++;
    } else {
      tokens += cost;
      returned.push(c);
    }
  }
  return { returned, candidates: ranked, filtered, tokens };
}
