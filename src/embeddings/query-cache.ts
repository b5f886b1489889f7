import type { Embedder } from "./embedder.js";

/** Embeds one query text. */
export type EmbedQuery = (text: string) => Promise<Float32Array>;

/**
 * Query embedding with an LRU cache keyed by the exact text, so repeated queries skip the model.
 * Promises are cached, so concurrent identical queries share one model call; failures are not kept.
 * size 0 disables the cache.
 */
export function cachedQueryEmbedder(embedder: Embedder, size: number): EmbedQuery {
  const embedOne = async (text: string) => (await embedder.embed([text]))[0]!;
  if (size <= 0) return embedOne;
  const cache = new Map<string, Promise<Float32Array>>();
  return (text) => {
    const hit = cache.get(text);
    if (hit) {
      // Re-inserting moves the entry to the end: Map iteration order is the recency order.
      cache.delete(text);
      cache.set(text, hit);
      return hit;
    }
    const pending = embedOne(text);
    cache.set(text, pending);
    pending.catch(() => {
      if (cache.get(text) === pending) cache.delete(text);
    });
    if (cache.size > size) cache.delete(cache.keys().next().value!);
    return pending;
  };
}
