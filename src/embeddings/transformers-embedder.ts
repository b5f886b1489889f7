import { existsSync } from "node:fs";
import path from "node:path";
import { ModelProcessEmbedder, type LocalModelOptions } from "./model-processes.js";

export interface TransformersOptions extends LocalModelOptions {
  /** EMBEDDING_MODEL_PATH: directory holding model directories. */
  modelPath: string;
  /** EMBEDDING_MODEL: a directory under modelPath with config.json, tokenizer.json and onnx/model.onnx. */
  model: string;
}

/**
 * A local ONNX sentence model (e.g. all-MiniLM-L6-v2) through transformers.js, never downloaded, in
 * child processes like the built-in model: onnxruntime computes on the thread that calls it, which
 * in the server would be the event loop.
 */
export class TransformersEmbedder extends ModelProcessEmbedder {
  static async create(options: TransformersOptions): Promise<TransformersEmbedder> {
    const dir = path.join(options.modelPath, options.model);
    if (!existsSync(dir)) {
      throw new Error(`EMBEDDING_MODEL "${options.model}" not found under EMBEDDING_MODEL_PATH (${dir} does not exist)`);
    }
    const embedder = new TransformersEmbedder(
      { provider: "transformers", model: options.model },
      {
        ...options,
        // The tokenizer truncates to the model's length; memories are at most 16,384 characters.
        maxChars: Infinity,
        load: async () => ({ runtime: "transformers", modelPath: options.modelPath, model: options.model, threads: options.threads ?? 1 }),
      },
    );
    try {
      await embedder.started();
    } catch (err) {
      throw new Error(`cannot load EMBEDDING_MODEL "${options.model}" from ${dir}: ${(err as Error).message}`, { cause: err });
    }
    return embedder;
  }
}
