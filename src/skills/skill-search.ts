import type { Scope } from "../accounts/container-scope.js";
import type { Sql } from "../db/database.js";
import { workspaceWide, type SkillVectorFilter, type SkillVectorIndex } from "../search/skills/skill-vector-index.js";
import { cosine } from "../search/scoring.js";
import { skillRelevance, type SkillSearchMode } from "./skill-scoring.js";
import { findSkills, type SkillQueryFilter, type SkillRecord } from "./skill-store.js";

export interface SkillSearchDeps {
  db: Sql;
  index: SkillVectorIndex;
  embedQuery(text: string): Promise<Float32Array>;
}

export interface SkillSearchQuery {
  query: string;
  limit: number;
  mode: SkillSearchMode;
  filter: SkillQueryFilter;
}

export interface SkillSearchResult {
  hits: Array<{ skill: SkillRecord; score: number }>;
  embedMs: number;
  searchMs: number;
}

/** Candidates each side contributes: headroom for the re-check against Postgres. */
const poolSize = (limit: number) => Math.min(400, Math.max(40, limit * 4));

/** The index filter for a scope and query filter: the containers admitted always include workspace-wide skills. */
function indexFilter(scope: Scope, f: SkillQueryFilter): SkillVectorFilter {
  const containers = f.containers ?? (scope.container === null ? null : [scope.container]);
  return {
    workspaceId: scope.workspaceId,
    ...(containers ? { containers: [...containers, workspaceWide] } : {}),
    ...(f.tags ? { tags: f.tags } : {}),
    ...(f.maturities ? { maturities: f.maturities } : {}),
    ...(f.includeDeprecated ? {} : { states: ["active"] }),
  };
}

/**
 * Hybrid skill search: nearest skills by the embedding of their embeddedText, and BM25 over their
 * keywordText (started while the query embeds), both in the skills collection. Candidates are ranked on what the
 * index returned; only the best are read from Postgres, which re-checks that each still exists and passes
 * the filter (the index follows Postgres through an outbox, so it may lag a write).
 */
export async function searchSkills(deps: SkillSearchDeps, scope: Scope, q: SkillSearchQuery): Promise<SkillSearchResult> {
  const { hits, embedMs, searchMs } = await rankSkillCandidates(deps, { ...q, filter: indexFilter(scope, q.filter) }, (ids) =>
    findSkills(deps.db, scope, ids, q.filter),
  );
  return { hits: hits.map((h) => ({ skill: h.item, score: h.score })), embedMs, searchMs };
}

/** A search of the skills collection under any index filter: a workspace's skills, or the marketplace's. */
export interface SkillCandidateQuery {
  query: string;
  limit: number;
  mode: SkillSearchMode;
  filter: SkillVectorFilter;
}

/**
 * The ranking behind every skill search: candidates from both sides of the index, re-checked by `load`
 * (which drops what the caller may not see, and reads what it shows), best first.
 */
export async function rankSkillCandidates<T extends { id: string }>(
  deps: Omit<SkillSearchDeps, "db">,
  q: SkillCandidateQuery,
  load: (ids: string[]) => Promise<T[]>,
): Promise<{ hits: Array<{ item: T; score: number }>; embedMs: number; searchMs: number }> {
  const pool = poolSize(q.limit);
  let embedMs = 0;
  const started = performance.now();
  const semantic = (async () => {
    if (q.mode === "keyword") return { vector: undefined, hits: [] };
    const t = performance.now();
    const vector = await deps.embedQuery(q.query);
    embedMs = performance.now() - t;
    return { vector, hits: await deps.index.search(vector, q.filter, pool) };
  })();
  const keyword = q.mode === "semantic" ? Promise.resolve([]) : deps.index.keywordSearch(q.query, q.filter, pool, q.mode !== "keyword");
  const [{ vector, hits }, keywordHits] = await Promise.all([semantic, keyword]);

  const cosines = new Map(hits.map((h) => [h.id, h.similarity]));
  const bm25 = new Map<string, number>();
  let bestBm25 = 0;
  for (const h of keywordHits) {
    bestBm25 = Math.max(bestBm25, h.bm25);
    bm25.set(h.id, h.bm25);
    if (vector && h.vector && !cosines.has(h.id)) cosines.set(h.id, cosine(vector, h.vector));
  }
  const ranked = [...new Set([...cosines.keys(), ...bm25.keys()])]
    .map((id) => ({ id, score: skillRelevance(q.mode, cosines.get(id) ?? 0, bm25.get(id) ?? 0, bestBm25) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
  const out: Array<{ item: T; score: number }> = [];
  // Usually one read of `limit` rows; more only where the index holds skills Postgres no longer admits.
  for (let from = 0; from < ranked.length && out.length < q.limit; ) {
    const batch = ranked.slice(from, from + q.limit - out.length);
    from += batch.length;
    const found = new Map((await load(batch.map((c) => c.id))).map((item) => [item.id, item]));
    for (const c of batch) {
      const item = found.get(c.id);
      if (item) out.push({ item, score: c.score });
    }
  }
  return { hits: out, embedMs, searchMs: performance.now() - started - embedMs };
}
