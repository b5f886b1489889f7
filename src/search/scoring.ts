// Scoring shared by every collection of the search module (memories for recall, skills).

// BM25's term-frequency saturation and length normalisation: LanceDB's full-text search uses these
// (Tantivy's defaults), and the scores computed here and in SQL must be on its scale.
const k1 = 1.2;
const b = 0.75;

/**
 * One term's BM25 in a document: `df` of the corpus's `n` documents hold the term, `tf` times in this one
 * of `length` terms, against the corpus's mean length `avgdl`.
 */
export function bm25Term(tf: number, df: number, n: number, length: number, avgdl: number): number {
  const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
  return (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length) / avgdl));
}

/** bm25Term as a SQL expression of the given SQL operands (float8), for the pgvector backend's keyword search. */
export const bm25TermSql = (o: { tf: string; df: string; n: string; length: string; avgdl: string }): string =>
  `ln(1 + (${o.n} - ${o.df} + 0.5) / (${o.df} + 0.5)) * ${o.tf} * ${k1 + 1} / (${o.tf} + ${k1} * (${1 - b} + ${b} * ${o.length} / ${o.avgdl}))`;

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
