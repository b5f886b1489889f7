// Encodes the few ONNX messages a converted graph needs (ModelProto, GraphProto, NodeProto, AttributeProto,
// TensorProto, ValueInfoProto) in the protobuf wire format. Field numbers are those of onnx/onnx.proto
// (github.com/onnx/onnx, onnx/onnx.proto): proto2, so repeated scalars are written unpacked.
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

/** TensorProto.DataType values used here. */
export const DataType = { float: 1, int64: 7, bool: 9 } as const;
export type DataType = (typeof DataType)[keyof typeof DataType];

export interface OnnxTensor {
  name: string;
  dataType: DataType;
  dims: number[];
  /** Little-endian element bytes (TensorProto.raw_data). */
  raw: Uint8Array;
}

export type OnnxAttribute =
  | { int: number }
  | { ints: readonly (number | bigint)[] }
  | { float: number }
  | { string: string }
  | { tensor: OnnxTensor };

export interface OnnxNode {
  opType: string;
  inputs: string[];
  outputs: string[];
  attributes?: Record<string, OnnxAttribute>;
}

/** A graph input or output; a string dimension is symbolic (dim_param), absent dims mean any shape. */
export interface OnnxValueInfo {
  name: string;
  dataType: DataType;
  dims?: Array<number | string>;
}

export interface OnnxGraph {
  name: string;
  nodes: OnnxNode[];
  initializers: OnnxTensor[];
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
}

/**
 * A message under construction, kept as a list of encoded parts: a nested message is spliced in by
 * reference, so the weights are copied once, into the final buffer, not once per nesting level.
 */
class Message {
  private readonly parts: Uint8Array[] = [];
  byteLength = 0;

  varint(field: number, value: number | bigint): this {
    return this.add(new BinaryWriter().tag(field, WireType.Varint).int64(value).finish());
  }

  float(field: number, value: number): this {
    return this.add(new BinaryWriter().tag(field, WireType.Bit32).float(value).finish());
  }

  string(field: number, value: string): this {
    return this.add(new BinaryWriter().tag(field, WireType.LengthDelimited).string(value).finish());
  }

  bytes(field: number, value: Uint8Array): this {
    this.add(new BinaryWriter().tag(field, WireType.LengthDelimited).uint32(value.byteLength).finish());
    return this.add(value);
  }

  message(field: number, value: Message): this {
    this.add(new BinaryWriter().tag(field, WireType.LengthDelimited).uint32(value.byteLength).finish());
    for (const part of value.parts) this.add(part);
    return this;
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.byteLength);
    let at = 0;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.byteLength;
    }
    return out;
  }

  private add(part: Uint8Array): this {
    this.parts.push(part);
    this.byteLength += part.byteLength;
    return this;
  }
}

// TensorProto: dims = 1, data_type = 2, name = 8, raw_data = 9.
function tensor(t: OnnxTensor): Message {
  const m = new Message();
  for (const d of t.dims) m.varint(1, d);
  return m.varint(2, t.dataType).string(8, t.name).bytes(9, t.raw);
}

// AttributeProto: name = 1, f = 2, i = 3, s = 4, t = 5, ints = 8, type = 20
// (AttributeType FLOAT = 1, INT = 2, STRING = 3, TENSOR = 4, INTS = 7).
function attribute(name: string, value: OnnxAttribute): Message {
  const m = new Message().string(1, name);
  if ("int" in value) return m.varint(3, value.int).varint(20, 2);
  if ("float" in value) return m.float(2, value.float).varint(20, 1);
  if ("string" in value) return m.string(4, value.string).varint(20, 3);
  if ("tensor" in value) return m.message(5, tensor(value.tensor)).varint(20, 4);
  for (const i of value.ints) m.varint(8, i);
  return m.varint(20, 7);
}

// NodeProto: input = 1, output = 2, name = 3, op_type = 4, attribute = 5.
function node(n: OnnxNode): Message {
  const m = new Message();
  for (const input of n.inputs) m.string(1, input);
  for (const output of n.outputs) m.string(2, output);
  m.string(3, n.outputs[0]!).string(4, n.opType);
  for (const [name, value] of Object.entries(n.attributes ?? {})) m.message(5, attribute(name, value));
  return m;
}

// ValueInfoProto: name = 1, type = 2. TypeProto: tensor_type = 1. TypeProto.Tensor: elem_type = 1,
// shape = 2. TensorShapeProto: dim = 1. TensorShapeProto.Dimension: dim_value = 1, dim_param = 2.
function valueInfo(v: OnnxValueInfo): Message {
  const tensorType = new Message().varint(1, v.dataType);
  if (v.dims) {
    const shape = new Message();
    for (const d of v.dims) shape.message(1, typeof d === "number" ? new Message().varint(1, d) : new Message().string(2, d));
    tensorType.message(2, shape);
  }
  return new Message().string(1, v.name).message(2, new Message().message(1, tensorType));
}

// GraphProto: node = 1, name = 2, initializer = 5, input = 11, output = 12.
function graph(g: OnnxGraph): Message {
  const m = new Message();
  for (const n of g.nodes) m.message(1, node(n));
  m.string(2, g.name);
  for (const t of g.initializers) m.message(5, tensor(t));
  for (const v of g.inputs) m.message(11, valueInfo(v));
  for (const v of g.outputs) m.message(12, valueInfo(v));
  return m;
}

/** ONNX 1.13 released opset 18 with IR version 8 (onnx/docs/Versioning.md). */
const irVersion = 8;

// ModelProto: ir_version = 1, producer_name = 2, graph = 7, opset_import = 8.
// OperatorSetIdProto: domain = 1, version = 2 (the default domain is the empty string).
export function encodeModel(g: OnnxGraph, opset: number, producer: string): Uint8Array {
  return new Message()
    .varint(1, irVersion)
    .string(2, producer)
    .message(7, graph(g))
    .message(8, new Message().string(1, "").varint(2, opset))
    .finish();
}
