import { ByteLru, entryOverheadBytes, stringBytes } from "../embeddings/lru.js";

/** What BM25 needs of a corpus: how many documents, and their average length. */
export interface CorpusStats {
  n: number;
  avgdl: number;
}

// Keys name a workspace and up to 16 containers of 64 characters: a megabyte holds thousands.
const maxCacheBytes = 1024 * 1024;

/**
 * Corpus statistics per key, cached for ttlMs: they change slowly, and counting them on every search
 * would scan the whole corpus. At most a megabyte of keys is kept.
 */
export function cachedCorpusStats<A>(ttlMs: number, keyOf: (arg: A) => string, load: (arg: A) => Promise<CorpusStats>): (arg: A) => Promise<CorpusStats> {
  const cache = new ByteLru<string, CorpusStats & { until: number }>(maxCacheBytes, (key) => entryOverheadBytes + stringBytes(key));
  return async (arg) => {
    const key = keyOf(arg);
    const cached = cache.get(key);
    if (cached && cached.until > Date.now()) return cached;
    const loaded = await load(arg);
    const fresh = { n: Math.max(1, Number(loaded.n)), avgdl: Math.max(1, Number(loaded.avgdl)), until: Date.now() + ttlMs };
    cache.set(key, fresh);
    return fresh;
  };
}
