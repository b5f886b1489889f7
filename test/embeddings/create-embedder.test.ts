import { getPriority } from "node:os";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createEmbedder } from "../../src/embeddings/create-embedder.js";
import type { UseLiteEmbedder } from "../../src/embeddings/use-lite-embedder.js";

describe("createEmbedder", () => {
  it("requires EMBEDDING_URL and EMBEDDING_MODEL for openai", async () => {
    await expect(createEmbedder(loadConfig({ EMBEDDING_PROVIDER: "openai", EMBEDDING_MODEL: "m" }))).rejects.toThrow(
      "EMBEDDING_URL: is required when EMBEDDING_PROVIDER=openai",
    );
    await expect(
      createEmbedder(loadConfig({ EMBEDDING_PROVIDER: "openai", EMBEDDING_URL: "http://127.0.0.1:1/v1" })),
    ).rejects.toThrow("EMBEDDING_MODEL: is required when EMBEDDING_PROVIDER=openai");
  });

  it("requires EMBEDDING_MODEL_PATH and EMBEDDING_MODEL for transformers", async () => {
    await expect(createEmbedder(loadConfig({ EMBEDDING_PROVIDER: "transformers", EMBEDDING_MODEL: "m" }))).rejects.toThrow(
      "EMBEDDING_MODEL_PATH: is required when EMBEDDING_PROVIDER=transformers",
    );
    await expect(
      createEmbedder(loadConfig({ EMBEDDING_PROVIDER: "transformers", EMBEDDING_MODEL_PATH: "/tmp" })),
    ).rejects.toThrow("EMBEDDING_MODEL: is required when EMBEDDING_PROVIDER=transformers");
  });

  it("builds the built-in use-lite provider by default, its model process 10 steps nicer than the server", async () => {
    const embedder = await createEmbedder(loadConfig({}));
    try {
      expect(embedder.info).toEqual({ provider: "use-lite", model: "universal-sentence-encoder-lite", dimensions: 512 });
      expect((embedder as UseLiteEmbedder).processIds().map((pid) => getPriority(pid!))).toEqual([Math.min(19, getPriority() + 10)]);
    } finally {
      await embedder.close();
    }
  });
});
