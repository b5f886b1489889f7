// Reads a TF.js graph model (model.json: a TensorFlow GraphDef in JSON, plus binary weight shards).
import { readFile } from "node:fs/promises";
import path from "node:path";

/** An attribute value of a GraphDef node, as TF.js writes it to JSON (int64s as strings, strings as bytes). */
export interface TfAttr {
  i?: string;
  b?: boolean;
  s?: number[];
  type?: number;
  list?: { i?: string[] };
  shape?: { dim?: Array<{ size: string }> };
}

export interface TfNode {
  name: string;
  op: string;
  input?: string[];
  attr?: Record<string, TfAttr>;
}

/** A constant's value: every Const of a TF.js graph model lives in the weight shards. */
export interface TfWeight {
  dtype: "float32" | "int32";
  shape: number[];
  data: Float32Array | Int32Array;
}

export interface TfGraph {
  nodes: TfNode[];
  weights: Map<string, TfWeight>;
}

interface WeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: unknown;
}

interface ModelJson {
  modelTopology: { node: TfNode[] };
  weightsManifest: Array<{ paths: string[]; weights: WeightSpec[] }>;
}

/** Loads `dir/model.json` and its weight shards; every weight is a view into one buffer. */
export async function readTfGraph(dir: string): Promise<TfGraph> {
  const manifest = JSON.parse(await readFile(path.join(dir, "model.json"), "utf8")) as ModelJson;
  const weights = new Map<string, TfWeight>();
  for (const group of manifest.weightsManifest) {
    const shards = await Promise.all(group.paths.map((p) => readFile(path.join(dir, p))));
    // One fresh buffer, so every weight starts on a 4-byte boundary and can be viewed in place.
    const bytes = new Uint8Array(shards.reduce((n, shard) => n + shard.byteLength, 0));
    shards.reduce((at, shard) => (bytes.set(shard, at), at + shard.byteLength), 0);
    let offset = 0;
    for (const spec of group.weights) {
      if (spec.quantization) throw new Error(`weight ${spec.name}: quantized weights are not supported`);
      if (spec.dtype !== "float32" && spec.dtype !== "int32") throw new Error(`weight ${spec.name}: dtype ${spec.dtype} is not supported`);
      const count = spec.shape.reduce((n, d) => n * d, 1);
      weights.set(spec.name, {
        dtype: spec.dtype,
        shape: spec.shape,
        data: spec.dtype === "float32" ? new Float32Array(bytes.buffer, offset, count) : new Int32Array(bytes.buffer, offset, count),
      });
      offset += count * 4;
    }
    if (offset !== bytes.byteLength) throw new Error(`weight shards hold ${bytes.byteLength} bytes, the manifest ${offset}`);
  }
  return { nodes: manifest.modelTopology.node, weights };
}
