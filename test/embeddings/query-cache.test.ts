import { describe, expect, it } from "vitest";
import type { Embedder } from "../../src/embeddings/embedder.js";
import { entryOverheadBytes } from "../../src/embeddings/lru.js";
import { cachedQueryEmbedder } from "../../src/embeddings/query-cache.js";

/** Embeds a text as [its length], counting every text the model sees. */
function countingEmbedder(): Embedder & { seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    info: { provider: "use-lite", model: "counting", dimensions: 1 },
    embed: async (texts) => {
      seen.push(...texts);
      return texts.map((t) => Float32Array.of(t.length));
    },
    close: async () => {},
  };
}

describe("cachedQueryEmbedder", () => {
  it("calls the model once for a repeated query", async () => {
    const model = countingEmbedder();
    const embedQuery = cachedQueryEmbedder(model, 4096);
    const first = await embedQuery("where is the config?");
    const second = await embedQuery("where is the config?");
    expect(second).toBe(first);
    expect(model.seen).toEqual(["where is the config?"]);
  });

  it("shares one model call between concurrent identical queries", async () => {
    const model = countingEmbedder();
    const embedQuery = cachedQueryEmbedder(model, 4096);
    await Promise.all([embedQuery("same"), embedQuery("same")]);
    expect(model.seen).toEqual(["same"]);
  });

  it("evicts the least recently used query", async () => {
    const model = countingEmbedder();
    // Room for two one-letter queries: each is counted as its overhead, its text and its 1-d vector.
    const embedQuery = cachedQueryEmbedder(model, 2 * (entryOverheadBytes + 2 + 4));
    await embedQuery("a");
    await embedQuery("b");
    await embedQuery("a"); // a is now more recent than b
    await embedQuery("c"); // evicts b
    await embedQuery("a");
    await embedQuery("c");
    expect(model.seen).toEqual(["a", "b", "c"]);
    await embedQuery("b");
    expect(model.seen).toEqual(["a", "b", "c", "b"]);
  });

  it("does not cache with size 0", async () => {
    const model = countingEmbedder();
    const embedQuery = cachedQueryEmbedder(model, 0);
    await embedQuery("q");
    await embedQuery("q");
    expect(model.seen).toEqual(["q", "q"]);
  });

  it("does not keep failures", async () => {
    let calls = 0;
    const flaky: Embedder = {
      info: { provider: "openai", model: "flaky", dimensions: 1 },
      embed: async () => {
        if (calls++ === 0) throw new Error("down");
        return [Float32Array.of(1)];
      },
      close: async () => {},
    };
    const embedQuery = cachedQueryEmbedder(flaky, 4096);
    await expect(embedQuery("q")).rejects.toThrow("down");
    expect(await embedQuery("q")).toEqual(Float32Array.of(1));
  });
});
