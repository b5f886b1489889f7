import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { children } from "../../bench/lib/process-tree.js";
import { TransformersEmbedder } from "../../src/embeddings/transformers-embedder.js";
import { rest, startTestServer } from "../support/test-server.js";
import { hiddenSize, writeTinyModel, type TinyModel } from "./tiny-onnx-model.js";

let root: string;
let tiny: TinyModel;
let embedder: TransformersEmbedder;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), "agentmem-tiny-model-"));
  tiny = writeTinyModel(root, "tiny-bert");
  embedder = await TransformersEmbedder.create({ modelPath: root, model: "tiny-bert", batchSize: 2 });
});

afterAll(async () => {
  await embedder?.close();
  rmSync(root, { recursive: true, force: true });
});

/** What mean pooling over the real tokens, then normalisation, must produce. */
function expected(tokens: string[]): Float32Array {
  const sum = new Float32Array(hiddenSize);
  for (const t of ["[CLS]", ...tokens, "[SEP]"]) tiny.tokenVector(t).forEach((x, i) => (sum[i]! += x));
  const n = Math.hypot(...sum);
  return sum.map((x) => x / n);
}

describe("TransformersEmbedder", () => {
  it("reads the dimensions from the model output", () => {
    expect(embedder.info).toEqual({ provider: "transformers", model: "tiny-bert", dimensions: hiddenSize });
  });

  it("mean-pools real tokens (not padding) and normalises, across batches, in input order", async () => {
    const texts = ["The cat sat", "a dog sat on the rug", "Revenue grew quarterly", "memory"];
    const tokens = [["the", "cat", "sat"], ["a", "dog", "sat", "on", "the", "rug"], ["revenue", "grew", "quarter", "##ly"], ["memory"]];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(4);
    vectors.forEach((v, i) => {
      expect(v).toHaveLength(hiddenSize);
      expected(tokens[i]!).forEach((x, d) => expect(v[d]).toBeCloseTo(x, 5));
    });
  });

  it("returns [] for no texts", async () => {
    expect(await embedder.embed([])).toEqual([]);
  });

  it("runs the model in a child process, replaced when it crashes", async () => {
    const [pid] = embedder.processIds();
    expect(pid).toBeGreaterThan(0);
    expect(pid).not.toBe(process.pid);
    await embedder.crashWorker(0);
    const [v] = await embedder.embed(["The cat sat"]);
    expected(["the", "cat", "sat"]).forEach((x, d) => expect(v![d]).toBeCloseTo(x, 5));
    expect(embedder.processIds()[0]).not.toBe(pid);
  });

  it("names the model and the cause when a directory holds no model, and leaves no process behind", async () => {
    mkdirSync(path.join(root, "empty"));
    const before = children();
    await expect(TransformersEmbedder.create({ modelPath: root, model: "empty", batchSize: 2 })).rejects.toThrow(
      /cannot load EMBEDDING_MODEL "empty" from .*empty: transformers model (failed to load|process exited)/,
    );
    expect(children()).toEqual(before);
  });

  it("names EMBEDDING_MODEL when the model directory is missing", async () => {
    await expect(TransformersEmbedder.create({ modelPath: root, model: "absent", batchSize: 2 })).rejects.toThrow(
      /EMBEDDING_MODEL "absent" not found under EMBEDDING_MODEL_PATH/,
    );
  });
});

describe("EMBEDDING_PROVIDER=transformers in the server", () => {
  it("stores and recalls over REST, the index sized to the model's 8 dimensions", async () => {
    const server = await startTestServer("pglite", { EMBEDDING_PROVIDER: "transformers", EMBEDDING_MODEL_PATH: root, EMBEDDING_MODEL: "tiny-bert" });
    try {
      const agent = rest(server.url, await server.createKey("acme", "tiny"));
      const created = await agent("POST", "/api/v1/agent/memories", { memories: [{ content: "the cat sat on the mat", type: "fact" }, { content: "revenue grew quarterly", type: "fact" }] });
      expect(created.status).toBe(200);
      await server.app.indexer.drain();
      const recalled = await agent("POST", "/api/v1/agent/recall", { query: "the cat sat on the mat", searchMode: "semantic" });
      expect(recalled.status).toBe(200);
      expect(recalled.body.memories[0]).toMatchObject({ id: created.body.ids[0] });
      expect(server.app.model.info).toEqual({ provider: "transformers", model: "tiny-bert", dimensions: hiddenSize });
    } finally {
      await server.close();
    }
  });
});
