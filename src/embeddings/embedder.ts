/** Which model produced a vector; stored beside every vector so a model change is detected. */
export interface EmbeddingModelInfo {
  provider: "use-lite" | "openai" | "transformers";
  model: string;
  dimensions: number;
}

/** Turns texts into unit-length vectors (cosine similarity = dot product). */
export interface Embedder {
  readonly info: EmbeddingModelInfo;
  /** Embeds texts in input order, batching internally. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}
