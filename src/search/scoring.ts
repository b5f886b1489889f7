// Scoring shared by every collection of the search module (memories for recall, skills).

/** BM25 scores grow without bound; this maps them to 0..1 (half-way at this score). */
export const bm25HalfScore = 12;

export const keywordRelevance = (bm25: number): number => (bm25 <= 0 ? 0 : bm25 / (bm25 + bm25HalfScore));

/** Cosine similarity of two vectors of the same length; 0 when either is all zeros. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return aa === 0 || bb === 0 ? 0 : dot / Math.sqrt(aa * bb);
}
