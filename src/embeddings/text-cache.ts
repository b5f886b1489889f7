import type { Embedder } from "./embedder.js";

/**
 * An embedder that remembers the vectors of recent texts (LRU by exact text), so a text embedded on the
 * write path (contradiction candidates) is not embedded again by the indexer moments later. Only the
 * texts missing from the cache reach the model, in one call. size 0 disables the cache.
 */
export function cachingEmbedder(embedder: Embedder, size: number): Embedder {
  if (size <= 0) return embedder;
  const cache = new Map<string, Float32Array>();
  const remember = (text: string, vector: Float32Array) => {
    cache.delete(text);
    cache.set(text, vector);
    if (cache.size > size) cache.delete(cache.keys().next().value!);
  };
  return {
    info: embedder.info,
    async embed(texts) {
      const out: Array<Float32Array | undefined> = texts.map((t) => {
        const hit = cache.get(t);
        // Re-inserting moves the entry to the end: Map iteration order is the recency order.
        if (hit) remember(t, hit);
        return hit;
      });
      const missing = [...new Set(texts.filter((_, i) => out[i] === undefined))];
      if (missing.length > 0) {
        const vectors = await embedder.embed(missing);
        const byText = new Map(missing.map((t, i) => [t, vectors[i]!]));
        for (const [t, v] of byText) remember(t, v);
        texts.forEach((t, i) => (out[i] ??= byText.get(t)));
      }
      return out as Float32Array[];
    },
    close: () => embedder.close(),
  };
}
