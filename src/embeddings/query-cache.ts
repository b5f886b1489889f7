import type { Embedder } from "./embedder.js";
import { ByteLru, entryOverheadBytes, stringBytes } from "./lru.js";

/** Embeds one query text. */
export type EmbedQuery = (text: string) => Promise<Float32Array>;

/**
 * Query embedding with an LRU cache keyed by the exact text, capped at maxBytes (text and vector), so
 * repeated queries skip the model. Promises are cached, so concurrent identical queries share one model
 * call; failures are not kept. maxBytes 0 disables the cache.
 */
export function cachedQueryEmbedder(embedder: Embedder, maxBytes: number): EmbedQuery {
  const embedOne = async (text: string) => (await embedder.embed([text]))[0]!;
  if (maxBytes <= 0) return embedOne;
  // The vector's size is known before it exists, so a pending query is counted at its final size.
  const vectorBytes = 4 * embedder.info.dimensions;
  const cache = new ByteLru<string, Promise<Float32Array>>(maxBytes, (text) => entryOverheadBytes + stringBytes(text) + vectorBytes);
  return (text) => {
    const hit = cache.get(text);
    if (hit) return hit;
    const pending = embedOne(text);
    cache.set(text, pending);
    pending.catch(() => cache.deleteIf(text, pending));
    return pending;
  };
}
