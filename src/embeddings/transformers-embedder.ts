import { existsSync } from "node:fs";
import path from "node:path";
import { env, pipeline, type FeatureExtractionPipeline } from "@huggingface/transformers";
import type { Embedder, EmbeddingModelInfo } from "./embedder.js";

export interface TransformersOptions {
  /** EMBEDDING_MODEL_PATH: directory holding model directories. */
  modelPath: string;
  /** EMBEDDING_MODEL: a directory under modelPath with config.json, tokenizer.json and onnx/model.onnx. */
  model: string;
  batchSize: number;
}

/** A local ONNX sentence model (e.g. all-MiniLM-L6-v2) through transformers.js; never downloads. */
export class TransformersEmbedder implements Embedder {
  private constructor(
    private readonly extractor: FeatureExtractionPipeline,
    private readonly batchSize: number,
    readonly info: EmbeddingModelInfo,
  ) {}

  static async create(options: TransformersOptions): Promise<TransformersEmbedder> {
    const dir = path.join(options.modelPath, options.model);
    if (!existsSync(dir)) {
      throw new Error(`EMBEDDING_MODEL "${options.model}" not found under EMBEDDING_MODEL_PATH (${dir} does not exist)`);
    }
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = options.modelPath;
    let extractor: FeatureExtractionPipeline;
    try {
      extractor = await pipeline("feature-extraction", options.model, { dtype: "fp32" });
    } catch (err) {
      throw new Error(`cannot load EMBEDDING_MODEL "${options.model}" from ${dir}: ${(err as Error).message}`, { cause: err });
    }
    const probe = await embedBatch(extractor, ["dimension probe"]);
    const info: EmbeddingModelInfo = { provider: "transformers", model: options.model, dimensions: probe[0]!.length };
    return new TransformersEmbedder(extractor, options.batchSize, info);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      out.push(...(await embedBatch(this.extractor, texts.slice(i, i + this.batchSize))));
    }
    return out;
  }

  async close(): Promise<void> {
    await this.extractor.dispose();
  }
}

/** Mean pooling over real tokens, then unit length: the sentence-transformers recipe. */
async function embedBatch(extractor: FeatureExtractionPipeline, texts: string[]): Promise<Float32Array[]> {
  const output = await extractor(texts, { pooling: "mean", normalize: true });
  const [rows, dim] = output.dims as [number, number];
  const data = output.data as Float32Array;
  const vectors = Array.from({ length: rows }, (_, r) => data.slice(r * dim, (r + 1) * dim));
  output.dispose();
  return vectors;
}
