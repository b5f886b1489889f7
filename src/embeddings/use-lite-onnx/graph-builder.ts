// The state of one conversion: the TF graph being read and the ONNX nodes and initializers written so far.
import { DataType, type OnnxAttribute, type OnnxNode, type OnnxTensor } from "./onnx-writer.js";
import type { TfGraph, TfNode, TfWeight } from "./tf-graph.js";

// TensorFlow's DataType enum (tensorflow/core/framework/types.proto).
const tfFloat = 1;
const tfInt32 = 3;
const tfInt64 = 9;
const tfBool = 10;

/**
 * The ONNX element type for a TF dtype. Every integer tensor becomes int64: the graph's integers are
 * shapes, positions and token ids, and ONNX wants int64 for shapes, axes and scatter indices.
 */
export function onnxType(tfType: number | undefined): DataType {
  if (tfType === tfFloat) return DataType.float;
  if (tfType === tfInt32 || tfType === tfInt64) return DataType.int64;
  if (tfType === tfBool) return DataType.bool;
  throw new Error(`TF dtype ${tfType} is not supported`);
}

export const int64Max = 2n ** 63n - 1n;
export const int64Min = -(2n ** 63n);

export class UnsupportedNodeError extends Error {
  constructor(node: TfNode, what: string) {
    super(`${node.op} node ${node.name}: ${what} is not supported`);
  }
}

// Attribute readers: an absent attribute reads as TensorFlow's default (0, false, empty).
export const attrInt = (node: TfNode, name: string): number => Number(node.attr?.[name]?.i ?? 0);
export const attrBool = (node: TfNode, name: string): boolean => node.attr?.[name]?.b ?? false;
export const attrInts = (node: TfNode, name: string): number[] => (node.attr?.[name]?.list?.i ?? []).map(Number);
export const attrType = (node: TfNode, name: string): number | undefined => node.attr?.[name]?.type;
export const attrString = (node: TfNode, name: string): string => String.fromCharCode(...(node.attr?.[name]?.s ?? []));

/** "node" and "node:0" name a node's first output, "node:k" its k-th; ONNX names keep that spelling. */
function valueName(ref: string): { node: string; value: string } {
  const match = /^(.*):(\d+)$/.exec(ref);
  if (!match) return { node: ref, value: ref };
  return { node: match[1]!, value: match[2] === "0" ? match[1]! : ref };
}

const bytesOf = (a: ArrayBufferView): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

export class GraphBuilder {
  readonly nodes: OnnxNode[] = [];
  readonly initializers: OnnxTensor[] = [];
  private readonly tfNodes: Map<string, TfNode>;
  private readonly emittedConstants = new Set<string>();
  private temps = 0;

  constructor(private readonly graph: TfGraph) {
    this.tfNodes = new Map(graph.nodes.map((n) => [n.name, n]));
  }

  /** The ONNX value for a node's i-th input; a Const input becomes an initializer on first use. */
  input(node: TfNode, i: number): string {
    const ref = node.input?.[i];
    if (ref === undefined) throw new UnsupportedNodeError(node, `a missing input ${i}`);
    if (ref.startsWith("^")) throw new UnsupportedNodeError(node, "a control input");
    const { node: source, value } = valueName(ref);
    const sourceNode = this.tfNodes.get(source);
    if (sourceNode?.op === "Const" && !this.emittedConstants.has(source)) {
      this.emittedConstants.add(source);
      const weight = this.weight(source);
      const dataType = onnxType(attrType(sourceNode, "dtype"));
      if ((dataType === DataType.float) !== (weight.dtype === "float32")) throw new UnsupportedNodeError(sourceNode, `a ${weight.dtype} weight`);
      const raw = dataType === DataType.float ? bytesOf(weight.data) : bytesOf(BigInt64Array.from(weight.data, BigInt));
      this.initializers.push({ name: source, dataType, dims: weight.shape, raw });
    }
    return value;
  }

  /** Every input of a node, in order. */
  inputs(node: TfNode): string[] {
    return (node.input ?? []).map((_, i) => this.input(node, i));
  }

  /** The ONNX value for a node's k-th output. */
  output(node: TfNode, k = 0): string {
    return k === 0 ? node.name : `${node.name}:${k}`;
  }

  /** The weight behind a node's i-th input, which must be a Const. */
  constantInput(node: TfNode, i: number): TfWeight {
    const ref = node.input?.[i] ?? "";
    const source = valueName(ref).node;
    if (this.tfNodes.get(source)?.op !== "Const") throw new UnsupportedNodeError(node, `a computed input ${i} (${ref})`);
    return this.weight(source);
  }

  /** The values of a node's i-th input, which must be a Const: an axis, a permutation, slice bounds. */
  constant(node: TfNode, i: number): number[] {
    return Array.from(this.constantInput(node, i).data);
  }

  /** A new int64 initializer (1-D unless dims say otherwise). */
  int64s(values: readonly (number | bigint)[], dims = [values.length]): string {
    return this.tensor(DataType.int64, dims, bytesOf(BigInt64Array.from(values, (v) => BigInt(v))));
  }

  /** A new initializer holding raw element bytes. */
  tensor(dataType: DataType, dims: number[], raw: Uint8Array): string {
    const name = this.temp("constant");
    this.initializers.push({ name, dataType, dims, raw });
    return name;
  }

  /** A fresh name for a value the TF graph does not have. */
  temp(hint: string): string {
    return `onnx/${hint}_${this.temps++}`;
  }

  emit(opType: string, inputs: string[], outputs: string[], attributes?: Record<string, OnnxAttribute>): void {
    this.nodes.push({ opType, inputs, outputs, ...(attributes ? { attributes } : {}) });
  }

  private weight(name: string): TfWeight {
    const weight = this.graph.weights.get(name);
    if (!weight) throw new Error(`Const ${name} has no weights in the shards`);
    return weight;
  }
}
