/** What the index stores per memory: the vector, the text it was made from, and the columns recall filters on. */
export interface VectorRecord {
  id: string;
  /** The memory's content, for keyword search. */
  content: string;
  workspaceId: string;
  containers: string[];
  type: string;
  tags: string[];
  /** low | medium | high | critical, or null. */
  severity: string | null;
  confidence: number;
  /** active | shadowed. */
  state: string;
  /** Epoch milliseconds. */
  validFrom: number;
  validUntil: number | null;
  createdAt: number;
  /** The metadata's terms (src/memories/metadata-terms.ts), so the index can filter by metadata. */
  metadataTerms: string[];
  vector: Float32Array;
}

/** Prefilters applied inside the index, so the k nearest returned all match. A list given empty matches nothing. */
export interface VectorFilter {
  workspaceId: string;
  /** Any-of; every container of the scope. Absent: every container of the workspace. */
  containers?: string[];
  types?: string[];
  /** Any-of. */
  tags?: string[];
  severities?: string[];
  minConfidence?: number;
  states?: string[];
  /** Epoch milliseconds: createdAfter is inclusive, createdBefore exclusive. */
  createdAfter?: number;
  createdBefore?: number;
  /** All-of (none: no condition): the terms of a metadata filter (src/memories/metadata-terms.ts). */
  metadataTerms?: string[];
  /** Only memories valid at this instant (validFrom <= t and (validUntil is null or validUntil > t)). */
  validAt?: number;
}

export interface VectorHit {
  id: string;
  /** Cosine similarity, -1 to 1. */
  similarity: number;
}

export interface KeywordHit {
  id: string;
  /** BM25 score, 0 or more. */
  bm25: number;
  /**
   * The memory's stored vector, so a keyword-only hit can be scored by cosine without a second search;
   * null unless the search was asked for vectors (reading them is most of a keyword search's cost).
   */
  vector: Float32Array | null;
}

/** The search index that follows Postgres: similarity search over vectors and BM25 keyword search over text. */
export interface VectorIndex {
  readonly kind: "lancedb" | "pgvector";
  /** Inserts or replaces records by id. */
  upsert(records: readonly VectorRecord[]): Promise<void>;
  delete(ids: readonly string[]): Promise<void>;
  /** The k most similar records that pass the filter, most similar first. */
  search(vector: Float32Array, filter: VectorFilter, k: number): Promise<VectorHit[]>;
  /** The k best BM25 matches for the query's words that pass the filter, best first, with their vectors if `withVectors`. */
  keywordSearch(query: string, filter: VectorFilter, k: number, withVectors: boolean): Promise<KeywordHit[]>;
  /** search() for several vectors in one query: one list of hits per vector, in input order. */
  searchMany(vectors: readonly Float32Array[], filter: VectorFilter, k: number): Promise<VectorHit[][]>;
  /** Folds recent writes into the ANN index and compacts; called on a schedule. */
  optimize(): Promise<void>;
  /** Number of records, for reconciliation and tests. */
  count(): Promise<number>;
  /** Every id in the index, a page of at most `size` at a time, for reconciliation with the system of record. */
  eachIdPage(size: number, fn: (ids: string[]) => Promise<void>): Promise<void>;
  /** Those of `ids` the index holds. */
  holding(ids: readonly string[]): Promise<string[]>;
  close(): Promise<void>;
}
