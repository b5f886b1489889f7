import type { FastifyBaseLogger } from "fastify";

// An optional cross-encoder reranker behind the common /rerank API (Text Embeddings Inference, Cohere,
// Jina, vLLM). One call per recall over the best fused candidates; any failure, timeout or unreadable
// answer yields null and recall keeps the fused order: the reranker can never fail a recall.

export interface RerankerOptions {
  /** The full endpoint, e.g. http://127.0.0.1:8080/rerank or https://api.jina.ai/v1/rerank. */
  url: string;
  model?: string | undefined;
  apiKey?: string | undefined;
  timeoutMs: number;
}

/** A relevance score per document, in input order (higher is better); null when the reranker failed. */
export type Reranker = (query: string, documents: readonly string[]) => Promise<Float64Array | null>;

/** Characters of a memory sent for reranking: rerankers read a few hundred tokens at most. */
export const rerankDocumentChars = 2000;

/**
 * Reads the answer shapes in use: a bare list of {index, score} (TEI), or {results: [...]} / {data: [...]}
 * of {index, relevance_score} (Cohere, Jina, vLLM) or {index, score}. Every document must be scored once.
 */
export function parseRerankScores(body: unknown, count: number): Float64Array | null {
  const list = Array.isArray(body)
    ? body
    : body !== null && typeof body === "object"
      ? ((body as Record<string, unknown>).results ?? (body as Record<string, unknown>).data)
      : undefined;
  if (!Array.isArray(list) || list.length !== count) return null;
  const scores = new Float64Array(count).fill(Number.NaN);
  for (const item of list as Array<Record<string, unknown> | null>) {
    const index = item?.index;
    const score = item?.relevance_score ?? item?.score;
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= count) return null;
    if (typeof score !== "number" || !Number.isFinite(score) || !Number.isNaN(scores[index]!)) return null;
    scores[index] = score;
  }
  return scores;
}

export function createReranker(options: RerankerOptions, log: FastifyBaseLogger): Reranker {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  return async (query, documents) => {
    if (documents.length === 0) return new Float64Array(0);
    try {
      const texts = documents.map((d) => (d.length > rerankDocumentChars ? d.slice(0, rerankDocumentChars) : d));
      const response = await fetch(options.url, {
        method: "POST",
        headers,
        // `documents` for Cohere, Jina and vLLM, `texts` for TEI; each ignores the other's field.
        body: JSON.stringify({ ...(options.model ? { model: options.model } : {}), query, documents: texts, texts, top_n: texts.length }),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      if (!response.ok) {
        log.warn({ status: response.status }, "reranker answered with an error; keeping the fused order");
        return null;
      }
      const scores = parseRerankScores(await response.json(), documents.length);
      if (!scores) log.warn("reranker answer unreadable; keeping the fused order");
      return scores;
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : String(err) }, "reranker failed or timed out; keeping the fused order");
      return null;
    }
  };
}
