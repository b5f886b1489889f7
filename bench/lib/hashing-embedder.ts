import type { Embedder, EmbeddingModelInfo } from "../../src/embeddings/embedder.js";

// A fast deterministic embedder for loading benchmarks: each word (lower-cased letters and digits) is
// hashed to one of the dimensions with a sign, and the sum is scaled to unit length. Texts sharing words
// are near each other, so the index sees clustered data as real text gives it; a text costs a few
// microseconds instead of the model's milliseconds, so a load measures storage and index, not the model.

/** FNV-1a, 32 bits. */
function fnv1a(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export function hashVector(text: string, dimensions: number): Float32Array {
  const v = new Float32Array(dimensions);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const h = fnv1a(word);
    v[h % dimensions]! += h & 0x80000000 ? -1 : 1;
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  if (norm === 0) v[0] = 1;
  else for (let i = 0; i < dimensions; i++) v[i]! /= Math.sqrt(norm);
  return v;
}

/**
 * Embeds by hashing but reports `info` (e.g. the built-in model's), so the server that later opens the
 * loaded index accepts it as its own: only its query vectors then come from the real model.
 */
export function hashingEmbedder(info: EmbeddingModelInfo): Embedder {
  return {
    info,
    embed: async (texts) => texts.map((t) => hashVector(t, info.dimensions)),
    close: async () => undefined,
  };
}
