import type { Embedder } from "../../src/embeddings/embedder.js";

/** Same unit vector for every text: for tests about what reaches storage or the rules, not about similarity. */
export const constantEmbedder: Embedder = {
  info: { provider: "use-lite", model: "test", dimensions: 512 },
  embed: async (texts) => texts.map(() => new Float32Array(512).fill(1 / Math.sqrt(512))),
  close: async () => undefined,
};
