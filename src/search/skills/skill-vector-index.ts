import type { KeywordHit, VectorHit } from "../vector/vector-index.js";

// The skills collection of the search module: one vector per skill (its name and description), with the
// columns skill search filters on. Like the memories collection it follows Postgres through an outbox.

/** Stands for "every container" in the index's containers column: workspace-wide skills have none. */
export const workspaceWide = "*";

export interface SkillVectorRecord {
  id: string;
  workspaceId: string;
  /** The skill's containers, or [workspaceWide] for a workspace-wide skill. */
  containers: string[];
  tags: string[];
  maturity: string;
  /** active | deprecated. */
  state: string;
  /** Listed in the public marketplace. */
  marketplace: boolean;
  /** The text keyword search matches (keywordText: name, description, the start of the body). */
  text: string;
  vector: Float32Array;
}

/** Prefilters applied inside the index. A list given empty matches nothing. */
export type SkillVectorFilter = SkillColumnFilter &
  // One workspace's skills, or the marketplace's (public skills of every workspace).
  ({ workspaceId: string; marketplace?: undefined } | { marketplace: true; workspaceId?: undefined });

export interface SkillColumnFilter {
  /** Any-of; include workspaceWide to admit workspace-wide skills. Absent: every container. */
  containers?: string[];
  tags?: string[];
  maturities?: string[];
  states?: string[];
}


export interface SkillVectorIndex {
  readonly kind: "lancedb" | "pgvector";
  upsert(records: readonly SkillVectorRecord[]): Promise<void>;
  delete(ids: readonly string[]): Promise<void>;
  /** The k most similar skills that pass the filter, most similar first (exact, or by the ANN index with an exact fallback). */
  search(vector: Float32Array, filter: SkillVectorFilter, k: number): Promise<VectorHit[]>;
  /** The k best BM25 matches of the query's words in the skills' text that pass the filter, best first, with their vectors if `withVectors`. */
  keywordSearch(query: string, filter: SkillVectorFilter, k: number, withVectors: boolean): Promise<KeywordHit[]>;
  /** Compacts the collection after writes. */
  optimize(): Promise<void>;
  /** Every id in the index, a page of at most `size` at a time, for reconciliation with the system of record. */
  eachIdPage(size: number, fn: (ids: string[]) => Promise<void>): Promise<void>;
  /** Those of `ids` the index holds. */
  holding(ids: readonly string[]): Promise<string[]>;
  count(): Promise<number>;
  close(): Promise<void>;
}

export function skillFilterMatchesNothing(f: SkillVectorFilter): boolean {
  return [f.containers, f.tags, f.maturities, f.states].some((list) => list?.length === 0);
}

/** The index's containers column for a skill's containers. */
export const indexedContainers = (containers: readonly string[]): string[] => (containers.length === 0 ? [workspaceWide] : [...containers]);
