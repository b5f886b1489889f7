// Ways to fuse per-skill scores for one query, as ranking candidates in bench/skill-search.ts. Each takes and
// returns one row of scores per query (one score per skill); higher ranks first.

export type Scores = number[][];

/** BM25 relative to the query's best match, as the server fuses it. */
export const relativeToBest = (sc: Scores): Scores =>
  sc.map((r) => {
    const best = Math.max(0, ...r);
    return r.map((x) => (best > 0 ? x / best : 0));
  });

/** The server's hybrid: (1 - w) * cosine + w * relative BM25 (skillRelevance). */
export const weightedSum = (cosines: Scores, relativeBm25: Scores, w: number): Scores =>
  cosines.map((r, i) => r.map((c, j) => (1 - w) * Math.max(0, c) + w * relativeBm25[i]![j]!));

const zScores = (r: number[]) => {
  const mean = r.reduce((a, x) => a + x, 0) / r.length;
  const sd = Math.sqrt(r.reduce((a, x) => a + (x - mean) ** 2, 0) / r.length) || 1;
  return r.map((x) => (x - mean) / sd);
};

/** Each side standardised over the skills of the query (mean 0, deviation 1), then weighted. */
export const zScoreSum = (a: Scores, b: Scores, wb: number): Scores =>
  a.map((r, i) => {
    const za = zScores(r);
    const zb = zScores(b[i]!);
    return za.map((x, j) => (1 - wb) * x + wb * zb[j]!);
  });

const ranks = (r: number[]) => {
  const out = new Array<number>(r.length);
  r.map((x, j) => [x, j] as const)
    .sort((p, q) => q[0] - p[0])
    .forEach(([x, j], p) => (out[j] = x > 0 ? p : Number.POSITIVE_INFINITY));
  return out;
};

/** Reciprocal rank fusion, weighted: (1 - wb) / (k + rank in a) + wb / (k + rank in b). */
export const reciprocalRankFusion = (a: Scores, b: Scores, wb: number, k = 60): Scores =>
  a.map((r, i) => {
    const ra = ranks(r);
    const rb = ranks(b[i]!);
    return ra.map((x, j) => (1 - wb) / (k + x) + wb / (k + rb[j]!));
  });
