import type { Scope } from "../accounts/container-scope.js";
import type { Database } from "../db/database.js";
import type { MemoryRecord } from "../memories/memory-store.js";
import { recheckCandidates } from "./candidate-store.js";
import { keepMetadataMatches } from "./metadata-candidates.js";
import { withPending, type PendingReader } from "./pending-candidates.js";
import type { RecallQuery } from "./recall-rules.js";
import {
  confidenceMultiplier,
  duplicateKey,
  informativeness,
  recencyBoost,
  relevance,
  severityMultiplier,
  validityState,
  type SearchMode,
  type ValidityState,
} from "./scoring.js";
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
  memory: MemoryRecord;
  cosine: number;
  bm25: number;
  informativeness: number;
  keywordMatches: string[];
  matchedVia: SearchMode;
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
}

export interface RecallEngineDeps {
  db: Database;
  vectors: VectorIndex;
  embedQuery(text: string): Promise<Float32Array>;
  /** Memories written but not indexed yet (read-your-writes). */
  readPending: PendingReader;
}

/** How many candidates each search contributes: enough headroom for filtering and deduplication. */
export const candidatePoolSize = (limit: number): number => Math.min(400, Math.max(40, limit * 4));

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
    q.mode === "semantic" ? ([] as KeywordHit[]) : pendingRead.then(() => deps.vectors.keywordSearch(q.query, filter, pool)),
    queryVector,
    pendingRead,
  ]);
  const { semantic: semanticHits, keyword: keywordHits } = withPending({ semantic: indexedSemantic, keyword: indexedKeyword }, pending, vector, pool);

  const cosineById = new Map(semanticHits.map((h) => [h.id, h.similarity]));
  const bm25ById = new Map(keywordHits.map((h) => [h.id, h.bm25]));
  // A keyword-only hit is scored by its cosine too, from the vector the keyword search returned.
  const keywordOnly: string[] = [];
  for (const h of keywordHits) {
    if (cosineById.has(h.id)) continue;
    keywordOnly.push(h.id);
    if (vector) cosineById.set(h.id, cosine(vector, h.vector));
  }
  const found = [...semanticHits.map((h) => h.id), ...keywordOnly];
  // A metadata filter matching too many memories to prefilter the index by id is applied to the candidates.
  const ids = q.metadata && !filter.ids ? await keepMetadataMatches(deps.db, found, q.metadata) : found;
  const checked = await recheckCandidates(deps.db, access, ids, q.mode === "semantic" ? null : q.query);
  const searchMs = performance.now() - started - embedMs;

  const now = new Date();
  const semanticIds = new Set(semanticHits.map((h) => h.id));
  const candidates = checked.map(({ memory, keywordMatches, terms }): ScoredCandidate => {
    const bm25 = bm25ById.get(memory.id);
    const cos = cosineById.get(memory.id) ?? 0;
    const informative = informativeness(terms);
    const rel = relevance(q.mode, cos, bm25 ?? 0, informative);
    const boost = recencyBoost(memory.validFrom, now);
    const sev = severityMultiplier(memory.severity);
    const conf = confidenceMultiplier(memory.confidence);
    return {
      memory,
      cosine: cos,
      bm25: bm25 ?? 0,
      informativeness: informative,
      keywordMatches,
      matchedVia: bm25 !== undefined && semanticIds.has(memory.id) ? "hybrid" : bm25 !== undefined ? "keyword" : "semantic",
      relevance: rel,
      recencyBoost: boost,
      severityMultiplier: sev,
      confidenceMultiplier: conf,
      finalScore: rel * boost * sev * conf,
      validityState: validityState(memory, q.validAt),
      outcome: "returned",
    };
  });
  return { ...selectResults(candidates, q), embedMs, searchMs };
}

/** Applies shadowing, validity, confidence, threshold, deduplication, limit and token budget, counting each drop. */
export function selectResults(candidates: ScoredCandidate[], q: RecallQuery): Omit<RecallResult, "embedMs" | "searchMs"> {
  const filtered = { belowThreshold: 0, deduplicated: 0, lowConfidence: 0, outsideValidityWindow: 0, overTokenBudget: 0, shadowed: 0 };
  const ranked = [...candidates].sort((a, b) => b.finalScore - a.finalScore || (a.memory.id < b.memory.id ? -1 : 1));
  const seen = new Set<string>();
  const returned: ScoredCandidate[] = [];
  let tokens = 0;
  let budgetReached = false;
  for (const c of ranked) {
    if (c.validityState === "shadowed" && !q.includeShadowed) {
      c.outcome = "shadowed";
      filtered.shadowed++;
      continue;
    }
    // A shadowed memory kept by includeShadowed still has to be inside its validity window.
    const window = c.validityState === "shadowed" ? validityState({ ...c.memory, state: "active" }, q.validAt) : c.validityState;
    const keep = window === "active" || (window === "expired" && q.includeExpired);
    if (!keep) {
      c.outcome = "outside_validity_window";
      filtered.outsideValidityWindow++;
      continue;
    }
    if (c.memory.confidence < q.minConfidence) {
      c.outcome = "low_confidence";
      filtered.lowConfidence++;
      continue;
    }
    if (c.finalScore < q.threshold) {
      c.outcome = "below_threshold";
      filtered.belowThreshold++;
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
