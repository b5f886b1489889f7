import type { Scope } from "../accounts/container-scope.js";
import type { Sql } from "../db/database.js";
import { workspaceWide, type SkillVectorFilter, type SkillVectorIndex } from "../search/skills/skill-vector-index.js";
import { skillRelevance, type SkillSearchMode } from "./skill-scoring.js";
import { findSkills, keywordSearchSkills, skillCorpusStats, type SkillCorpusStats, type SkillQueryFilter, type SkillRecord } from "./skill-store.js";

export interface SkillSearchDeps {
  db: Sql;
  index: SkillVectorIndex;
  embedQuery(text: string): Promise<Float32Array>;
  corpusStats(workspaceId: string): Promise<SkillCorpusStats>;
}

/** Corpus statistics change slowly; counting a workspace's skills on every search would scan them all. */
const corpusStatsTtlMs = 30_000;

export function cachedCorpusStats(db: Sql): (workspaceId: string) => Promise<SkillCorpusStats> {
  const cache = new Map<string, SkillCorpusStats & { until: number }>();
  return async (workspaceId) => {
    const hit = cache.get(workspaceId);
    if (hit && hit.until > Date.now()) return hit;
    const fresh = { ...(await skillCorpusStats(db, workspaceId)), until: Date.now() + corpusStatsTtlMs };
    if (cache.size > 10_000) cache.clear();
    cache.set(workspaceId, fresh);
    return fresh;
  };
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
 * Hybrid skill search: nearest skills by the embedding of name and description, BM25 over the same
 * text in Postgres (started while the query embeds), every candidate re-checked against Postgres, then
 * ranked by skillRelevance.
 */
export async function searchSkills(deps: SkillSearchDeps, scope: Scope, q: SkillSearchQuery): Promise<SkillSearchResult> {
  const pool = poolSize(q.limit);
  const filter = indexFilter(scope, q.filter);
  let embedMs = 0;
  const started = performance.now();
  const semantic = (async () => {
    if (q.mode === "keyword") return { vector: undefined, hits: [] };
    const t = performance.now();
    const vector = await deps.embedQuery(q.query);
    embedMs = performance.now() - t;
    return { vector, hits: await deps.index.search(vector, filter, pool) };
  })();
  const keyword =
    q.mode === "semantic"
      ? Promise.resolve([])
      : deps.corpusStats(scope.workspaceId).then((corpus) => keywordSearchSkills(deps.db, scope, q.query, q.filter, pool, corpus));
  const [{ vector, hits }, keywordHits] = await Promise.all([semantic, keyword]);

  const cosines = new Map(hits.map((h) => [h.id, h.similarity]));
  const bm25 = new Map(keywordHits.map((h) => [h.id, h.bm25]));
  const keywordOnly = keywordHits.filter((h) => !cosines.has(h.id)).map((h) => h.id);
  if (vector && keywordOnly.length > 0) {
    for (const h of await deps.index.search(vector, { ...filter, ids: keywordOnly }, keywordOnly.length)) cosines.set(h.id, h.similarity);
  }
  const ids = [...new Set([...cosines.keys(), ...bm25.keys()])];
  const skills = await findSkills(deps.db, scope, ids, q.filter);
  const searchMs = performance.now() - started - embedMs;
  const ranked = skills
    .map((skill) => ({ skill, score: skillRelevance(q.mode, cosines.get(skill.id) ?? 0, bm25.get(skill.id) ?? 0) }))
    .sort((a, b) => b.score - a.score || (a.skill.id < b.skill.id ? -1 : 1))
    .slice(0, q.limit);
  return { hits: ranked, embedMs, searchMs };
}
