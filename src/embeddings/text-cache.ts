import type { Embedder } from "./embedder.js";
import { ByteLru, entryOverheadBytes, stringBytes } from "./lru.js";

/**
 * An embedder that remembers the vectors of recent texts (LRU by exact text, capped at maxBytes of text
 * and vector), so a text embedded on the write path (contradiction candidates) is not embedded again by
 * the indexer moments later. Only the texts missing from the cache reach the model, in one call.
 * maxBytes 0 disables the cache.
 */
export function cachingEmbedder(embedder: Embedder, maxBytes: number): Embedder {
  if (maxBytes <= 0) return embedder;
  const cache = new ByteLru<string, Float32Array>(maxBytes, (text, vector) =>
    // The whole buffer: a vector that is a view into a batch's output would keep all of it alive.
    entryOverheadBytes + stringBytes(text) + vector.buffer.byteLength,
  );
  return {
    info: embedder.info,
    async embed(texts) {
      const out = texts.map((t) => cache.get(t));
      const missing = [...new Set(texts.filter((_, i) => out[i] === undefined))];
      if (missing.length > 0) {
        const vectors = await embedder.embed(missing);
        const byText = new Map(missing.map((t, i) => [t, vectors[i]!]));
        for (const [t, v] of byText) cache.set(t, v);
        texts.forEach((t, i) => (out[i] ??= byText.get(t)));
      }
      return out as Float32Array[];
    },
    close: () => embedder.close(),
  };
}
