import type { VectorFilter } from "./vector-index.js";

/** One record per id, the last one given winning: both backends reject an id twice in one upsert. */
export function lastPerId<R extends { id: string }>(records: readonly R[]): R[] {
  return [...new Map(records.map((r) => [r.id, r])).values()];
}

export function checkDimensions(vector: Float32Array, dimensions: number): void {
  if (vector.length !== dimensions) {
    throw new RangeError(`vector has ${vector.length} dimensions, the index has ${dimensions}`);
  }
}

/** A list filter given empty admits nothing, so the search can be skipped. */
export function matchesNothing(filter: VectorFilter): boolean {
  const lists = [filter.containers, filter.types, filter.tags, filter.severities, filter.states];
  return lists.some((list) => list?.length === 0);
}

/** A vector as an indexing job stores it: its float4 bytes, base64-encoded for JSON parameters. */
export const vectorToBase64 = (v: Float32Array): string => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64");

/** A stored vector (float4 bytes, as bytea) read back; copied, since the bytes need not be aligned. */
export const vectorFromBytes = (bytes: Uint8Array): Float32Array =>
  new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));

/** A pgvector vector read as text ("[0.1,0.2,…]", which is JSON); null stays null. */
export const vectorOfText = (text: string | null): Float32Array | null => (text === null ? null : Float32Array.from(JSON.parse(text) as number[]));

/** The metadata terms of memories by id (absent: no such memory). */
export type MetadataTermsOf = (ids: string[]) => Promise<Map<string, string[]>>;

/**
 * Gives rows indexed before the index stored metadata terms their terms, a page at a time, until no
 * such row is left (returns how many it wrote): run at every open, so an interrupted backfill resumes. A memory Postgres no longer
 * has gets none (reconciliation removes it). Nodes opening at once may write a page twice, identically.
 */
export async function backfillMetadataTerms(
  termsOf: MetadataTermsOf,
  untermed: (limit: number) => Promise<string[]>,
  write: (rows: Array<{ id: string; terms: string[] }>) => Promise<void>,
): Promise<number> {
  let written = 0;
  for (;;) {
    const ids = await untermed(5000);
    if (ids.length === 0) return written;
    written += ids.length;
    const terms = await termsOf(ids);
    await write(ids.map((id) => ({ id, terms: terms.get(id) ?? [] })));
  }
}
