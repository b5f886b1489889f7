import type { Embedder } from "./embedder.js";
import { Lru } from "./lru.js";

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
  const cache = new Lru<string, Promise<Float32Array>>(size);
  return (text) => {
    const hit = cache.get(text);
    if (hit) return hit;
    const pending = embedOne(text);
    cache.set(text, pending);
    pending.catch(() => cache.deleteIf(text, pending));
    return pending;
  };
}
