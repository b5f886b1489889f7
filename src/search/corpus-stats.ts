/** What BM25 needs of a corpus: how many documents, and their average length. */
export interface CorpusStats {
  n: number;
  avgdl: number;
}

/**
 * Corpus statistics per key, cached for ttlMs: they change slowly, and counting them on every search
 * would scan the whole corpus. At most 10,000 keys are kept.
 */
export function cachedCorpusStats<A>(ttlMs: number, keyOf: (arg: A) => string, load: (arg: A) => Promise<CorpusStats>): (arg: A) => Promise<CorpusStats> {
  const cache = new Map<string, CorpusStats & { until: number }>();
  return async (arg) => {
    const key = keyOf(arg);
    const cached = cache.get(key);
    if (cached && cached.until > Date.now()) return cached;
    const loaded = await load(arg);
    const fresh = { n: Math.max(1, Number(loaded.n)), avgdl: Math.max(1, Number(loaded.avgdl)), until: Date.now() + ttlMs };
    if (cache.size >= 10_000) cache.clear();
    cache.set(key, fresh);
    return fresh;
  };
}
