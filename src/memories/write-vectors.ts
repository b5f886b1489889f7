import type { FastifyBaseLogger } from "fastify";
import type { Embedder } from "../embeddings/embedder.js";

/**
 * Embeds written contents on the write path; the vectors travel with the indexing jobs, so recall scores
 * a memory before the indexer has written it to the index (read-your-writes). A failure never fails the
 * write: its vectors are null, and the memory is found by keyword until it is indexed.
 */
export type WriteEmbedder = (texts: readonly string[]) => Promise<Array<Float32Array | null>>;

export function writeEmbedder(embedder: Embedder, log: FastifyBaseLogger): WriteEmbedder {
  return async (texts) => {
    if (texts.length === 0) return [];
    try {
      return await embedder.embed(texts);
    } catch (err) {
      log.warn({ err }, "embedding written memories failed; they are found by keyword until indexed");
      return texts.map(() => null);
    }
  };
}
