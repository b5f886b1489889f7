// BM25 in this process over PostgreSQL's English lexemes, computed as the pgvector backend's keyword search
// computes it (k1 1.2, b 0.75, document length = distinct lexemes), so ranking candidates can be compared
// without a server. LanceDB's analyser differs a little: its ranks are close, not identical.

import { PGlite } from "@electric-sql/pglite";

/** Lexeme -> occurrences. */
export type Lexemes = Map<string, number>;

export async function openLexer(): Promise<{ lexemes(text: string): Promise<Lexemes>; close(): Promise<void> }> {
  const pg = new PGlite();
  return {
    async lexemes(text) {
      const r = await pg.query<{ lexeme: string; n: number }>(
        `select lexeme, coalesce(array_length(positions, 1), 1) as n from unnest(to_tsvector('english', $1))`,
        [text],
      );
      return new Map(r.rows.map((x) => [x.lexeme, Number(x.n)]));
    },
    close: () => pg.close(),
  };
}

/** BM25 of every document for a query whose lexemes carry weights (1 for the query's own words). */
export function bm25Index(docs: readonly Lexemes[], k1 = 1.2, b = 0.75): (query: ReadonlyMap<string, number>) => number[] {
  const n = docs.length;
  const avgdl = docs.reduce((a, d) => a + d.size, 0) / n;
  const df = new Map<string, number>();
  for (const d of docs) for (const w of d.keys()) df.set(w, (df.get(w) ?? 0) + 1);
  return (query) =>
    docs.map((d) => {
      let s = 0;
      for (const [w, weight] of query) {
        const tf = d.get(w);
        if (!tf) continue;
        const x = df.get(w)!;
        s += (weight * Math.log(1 + (n - x + 0.5) / (x + 0.5)) * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * d.size) / avgdl));
      }
      return s;
    });
}
