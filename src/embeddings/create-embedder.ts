import { availableParallelism } from "node:os";
import { ConfigError, type Config } from "../config.js";
import type { Embedder } from "./embedder.js";
import { OpenAiEmbedder } from "./openai-embedder.js";
import { TransformersEmbedder } from "./transformers-embedder.js";
import { UseLiteEmbedder } from "./use-lite-embedder.js";

function required(value: string | undefined, name: string, provider: string): string {
  if (!value) throw new ConfigError(`invalid configuration:\n  ${name}: is required when EMBEDDING_PROVIDER=${provider}`);
  return value;
}

/** The configured embedding provider, loaded and ready. */
export async function createEmbedder(config: Config): Promise<Embedder> {
  const batchSize = config.EMBEDDING_BATCH_SIZE;
  switch (config.EMBEDDING_PROVIDER) {
    case "use-lite":
      return UseLiteEmbedder.create({ batchSize, ...modelProcesses(config) });
    case "openai":
      return OpenAiEmbedder.create({
        url: required(config.EMBEDDING_URL, "EMBEDDING_URL", "openai"),
        model: required(config.EMBEDDING_MODEL, "EMBEDDING_MODEL", "openai"),
        apiKey: config.EMBEDDING_API_KEY,
        dimensions: config.EMBEDDING_DIMENSIONS,
        batchSize,
      });
    case "transformers":
      return TransformersEmbedder.create({
        modelPath: required(config.EMBEDDING_MODEL_PATH, "EMBEDDING_MODEL_PATH", "transformers"),
        model: required(config.EMBEDDING_MODEL, "EMBEDDING_MODEL", "transformers"),
        batchSize,
        ...modelProcesses(config),
      });
  }
}

/** The model processes of a local model (use-lite, transformers): one thread per core, at most two, as the server needs CPU too. */
const modelProcesses = (config: Config) => ({
  workers: config.EMBEDDING_WORKERS ?? 1,
  threads: config.EMBEDDING_THREADS ?? Math.min(2, availableParallelism()),
  niceness: config.EMBEDDING_NICENESS,
});
