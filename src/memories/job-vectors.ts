import type { Sql } from "../db/database.js";
import { ByteLru, entryOverheadBytes, stringBytes } from "../embeddings/lru.js";
import { vectorFromBytes } from "../search/vector/records.js";

/**
 * About 4,000 vectors of 512 dimensions: four workspaces' pending jobs at recall's bound (pendingScanLimit),
 * twenty at the contradiction finder's.
 */
export const defaultJobVectorsBytes = 8 * 2 ** 20;

const jobVectorsSql = "select seq::text as seq, vector from index_outbox where seq = any($1::bigint[])";

/** Takes the seqs of the jobs whose vectors are wanted; null stands for a row with no job to read, and is skipped. */
export type JobVectorReader = (seqs: readonly (string | null)[]) => Promise<Map<string, Float32Array | null>>;

/**
 * Reads the vectors indexing jobs carry, by job (`index_outbox.seq`), each from Postgres once: a job is one
 * write's, and its vector never changes. A job gone from the outbox (indexed since) is left out; a job
 * without a vector (its write could not embed) maps to null. One reader serves recall's pending read and
 * the contradiction finder, which read the same jobs.
 */
export function jobVectorReader(db: Sql, maxBytes = defaultJobVectorsBytes): JobVectorReader {
  const kept = new ByteLru<string, Float32Array | null>(maxBytes, (seq, v) => entryOverheadBytes + stringBytes(seq) + (v?.byteLength ?? 0));
  return async (seqs) => {
    const found = new Map<string, Float32Array | null>();
    const missing: string[] = [];
    for (const seq of seqs) {
      if (seq === null) continue;
      const vector = kept.get(seq);
      if (vector === undefined) missing.push(seq);
      else found.set(seq, vector);
    }
    if (missing.length === 0) return found;
    for (const r of await db.query<{ seq: string; vector: Uint8Array | null }>(jobVectorsSql, [missing])) {
      const vector = r.vector ? vectorFromBytes(r.vector) : null;
      kept.set(r.seq, vector);
      found.set(r.seq, vector);
    }
    return found;
  };
}
