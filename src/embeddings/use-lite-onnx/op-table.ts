// How each TensorFlow op of the USE-lite graph is written in ONNX (opset 18). Only the attribute values
// the graph uses are mapped; any other value stops the conversion with the node's name rather than
// converting it wrongly. TF semantics: tensorflow.org/api_docs/python/tf/raw_ops; ONNX: onnx.ai/onnx/operators.
import { DataType } from "./onnx-writer.js";
import {
  UnsupportedNodeError,
  attrBool,
  attrInt,
  attrInts,
  attrString,
  attrType,
  int64Max,
  int64Min,
  onnxType,
  type GraphBuilder,
} from "./graph-builder.js";
import type { TfNode } from "./tf-graph.js";

type Converter = (node: TfNode, g: GraphBuilder) => void;

/** An op ONNX has under another name, with the same inputs and numpy broadcasting. */
const renamed =
  (opType: string): Converter =>
  (node, g) =>
    g.emit(opType, g.inputs(node), [g.output(node)]);

/** Sum, Mean, Max, Prod: the axes (a constant scalar or list) become an input in opset 18. */
const reduction =
  (opType: string): Converter =>
  (node, g) =>
    g.emit(opType, [g.input(node, 0), g.int64s(g.constant(node, 1))], [g.output(node)], {
      keepdims: { int: attrBool(node, "keep_dims") ? 1 : 0 },
    });

/** A zero of an ONNX type, as ConstantOfShape's one-element value tensor. */
function zero(dataType: DataType) {
  const bytes = dataType === DataType.float ? 4 : dataType === DataType.int64 ? 8 : 1;
  return { name: "zero", dataType, dims: [1], raw: new Uint8Array(bytes) };
}

/** A 1x1 NHWC convolution with unit strides and dilations is a MatMul over the channel axis. */
const conv2d: Converter = (node, g) => {
  const kernel = g.constantInput(node, 1);
  const [height, width, inChannels, outChannels] = kernel.shape;
  if (attrString(node, "data_format") !== "NHWC") throw new UnsupportedNodeError(node, `data_format ${attrString(node, "data_format")}`);
  if (height !== 1 || width !== 1) throw new UnsupportedNodeError(node, `a ${height}x${width} kernel`);
  if ([...attrInts(node, "strides"), ...attrInts(node, "dilations")].some((v) => v !== 1)) {
    throw new UnsupportedNodeError(node, "a stride or dilation other than 1");
  }
  // HWIO with H = W = 1 has the bytes of an [in, out] matrix; padding cannot matter for a 1x1 kernel.
  const raw = new Uint8Array(kernel.data.buffer, kernel.data.byteOffset, kernel.data.byteLength);
  const weights = g.tensor(DataType.float, [inChannels!, outChannels!], raw);
  g.emit("MatMul", [g.input(node, 0), weights], [g.output(node)]);
};

/** StridedSlice with begin, end and shrink-axis masks: Slice, then Squeeze for the shrunk axes. */
const stridedSlice: Converter = (node, g) => {
  if (attrInt(node, "ellipsis_mask") || attrInt(node, "new_axis_mask")) throw new UnsupportedNodeError(node, "an ellipsis or new-axis mask");
  const [begin, end, strides] = [g.constant(node, 1), g.constant(node, 2), g.constant(node, 3)];
  const [beginMask, endMask, shrinkMask] = ["begin_mask", "end_mask", "shrink_axis_mask"].map((m) => attrInt(node, m));
  const starts: bigint[] = [];
  const ends: bigint[] = [];
  const steps: number[] = [];
  const shrunk: number[] = [];
  begin.forEach((b, axis) => {
    const bit = 1 << axis;
    const step = strides[axis]!;
    if (shrinkMask! & bit) {
      // A shrunk axis keeps the one element at begin; TF ignores end, end mask and stride there.
      starts.push(BigInt(b));
      ends.push(b === -1 ? int64Max : BigInt(b + 1));
      steps.push(1);
      shrunk.push(axis);
      return;
    }
    starts.push(beginMask! & bit ? (step > 0 ? 0n : int64Max) : BigInt(b));
    ends.push(endMask! & bit ? (step > 0 ? int64Max : int64Min) : BigInt(end[axis]!));
    steps.push(step);
  });
  const axes = begin.map((_, axis) => axis);
  const sliced = shrunk.length > 0 ? g.temp("strided_slice") : g.output(node);
  g.emit("Slice", [g.input(node, 0), g.int64s(starts), g.int64s(ends), g.int64s(axes), g.int64s(steps)], [sliced]);
  if (shrunk.length > 0) g.emit("Squeeze", [sliced, g.int64s(shrunk)], [g.output(node)]);
};

export const opTable: Record<string, Converter> = {
  Add: renamed("Add"),
  Sub: renamed("Sub"),
  Mul: renamed("Mul"),
  RealDiv: renamed("Div"),
  Maximum: renamed("Max"),
  Less: renamed("Less"),
  Greater: renamed("Greater"),
  LogicalNot: renamed("Not"),
  Sin: renamed("Sin"),
  Cos: renamed("Cos"),
  Tanh: renamed("Tanh"),
  Relu: renamed("Relu"),
  // TF normalises over the last axis; ONNX Softmax (opset 13+) over `axis`, default -1.
  Softmax: renamed("Softmax"),
  Shape: renamed("Shape"),
  Range: renamed("Range"),
  GatherNd: renamed("GatherND"),
  Sum: reduction("ReduceSum"),
  Mean: reduction("ReduceMean"),
  Max: reduction("ReduceMax"),
  Prod: reduction("ReduceProd"),
  Square: (node, g) => {
    const x = g.input(node, 0);
    g.emit("Mul", [x, x], [g.output(node)]);
  },
  Rsqrt: (node, g) => {
    const root = g.temp("sqrt");
    g.emit("Sqrt", [g.input(node, 0)], [root]);
    g.emit("Reciprocal", [root], [g.output(node)]);
  },
  Cast: (node, g) => {
    g.emit("Cast", [g.input(node, 0)], [g.output(node)], { to: { int: onnxType(attrType(node, "DstT")) } });
  },
  // TF allows a 0 in the new shape to mean an empty dimension; ONNX only with allowzero.
  Reshape: (node, g) => {
    g.emit("Reshape", g.inputs(node), [g.output(node)], { allowzero: { int: 1 } });
  },
  ExpandDims: (node, g) => {
    g.emit("Unsqueeze", [g.input(node, 0), g.int64s(g.constant(node, 1))], [g.output(node)]);
  },
  Squeeze: (node, g) => {
    const axes = attrInts(node, "squeeze_dims");
    g.emit("Squeeze", axes.length > 0 ? [g.input(node, 0), g.int64s(axes)] : [g.input(node, 0)], [g.output(node)]);
  },
  Transpose: (node, g) => {
    g.emit("Transpose", [g.input(node, 0)], [g.output(node)], { perm: { ints: g.constant(node, 1) } });
  },
  GatherV2: (node, g) => {
    if (attrInt(node, "batch_dims")) throw new UnsupportedNodeError(node, "batch_dims");
    const [axis] = g.constant(node, 2);
    g.emit("Gather", [g.input(node, 0), g.input(node, 1)], [g.output(node)], { axis: { int: axis! } });
  },
  // The last input is the axis.
  ConcatV2: (node, g) => {
    const count = (node.input ?? []).length - 1;
    const [axis] = g.constant(node, count);
    const values = Array.from({ length: count }, (_, i) => g.input(node, i));
    g.emit("Concat", values, [g.output(node)], { axis: { int: axis! } });
  },
  Pack: (node, g) => {
    const axis = attrInt(node, "axis");
    const expanded = (node.input ?? []).map((_, i) => {
      const name = g.temp("pack");
      g.emit("Unsqueeze", [g.input(node, i), g.int64s([axis])], [name]);
      return name;
    });
    g.emit("Concat", expanded, [g.output(node)], { axis: { int: axis } });
  },
  SplitV: (node, g) => {
    const sizes = g.constant(node, 1);
    if (sizes.includes(-1)) throw new UnsupportedNodeError(node, "an inferred split size (-1)");
    const [axis] = g.constant(node, 2);
    const outputs = sizes.map((_, k) => g.output(node, k));
    g.emit("Split", [g.input(node, 0), g.int64s(sizes)], outputs, { axis: { int: axis! } });
  },
  // Slice(input, begin, size): a size of -1 takes the rest of the axis.
  Slice: (node, g) => {
    const begin = g.constant(node, 1);
    const size = g.constant(node, 2);
    const ends = begin.map((b, axis) => (size[axis] === -1 ? int64Max : BigInt(b + size[axis]!)));
    g.emit("Slice", [g.input(node, 0), g.int64s(begin), g.int64s(ends), g.int64s(begin.map((_, axis) => axis))], [g.output(node)]);
  },
  StridedSlice: stridedSlice,
  // Where(condition) with one input lists the coordinates of true elements, one row each; NonZero
  // lists them one column each.
  Where: (node, g) => {
    if ((node.input ?? []).length !== 1) throw new UnsupportedNodeError(node, "Where with x and y");
    const columns = g.temp("nonzero");
    g.emit("NonZero", [g.input(node, 0)], [columns]);
    g.emit("Transpose", [columns], [g.output(node)], { perm: { ints: [1, 0] } });
  },
  // SparseToDense(indices, shape, values, default): the default value everywhere, then the values.
  SparseToDense: (node, g) => {
    const dense = g.temp("dense");
    g.emit("Expand", [g.input(node, 3), g.input(node, 1)], [dense]);
    g.emit("ScatterND", [dense, g.input(node, 0), g.input(node, 2)], [g.output(node)]);
  },
  // ScatterNd(indices, updates, shape) adds updates into zeros (repeated indices sum up).
  ScatterNd: (node, g) => {
    const zeros = g.temp("zeros");
    g.emit("ConstantOfShape", [g.input(node, 2)], [zeros], { value: { tensor: zero(onnxType(attrType(node, "T"))) } });
    g.emit("ScatterND", [zeros, g.input(node, 0), g.input(node, 1)], [g.output(node)], { reduction: { string: "add" } });
  },
  MatMul: (node, g) => {
    if (attrBool(node, "transpose_a") || attrBool(node, "transpose_b")) throw new UnsupportedNodeError(node, "a transposed operand");
    g.emit("MatMul", g.inputs(node), [g.output(node)]);
  },
  // adj_y multiplies by the transpose of y's last two axes, whatever y's rank: an Einsum says so
  // without knowing the rank.
  BatchMatMul: (node, g) => {
    if (attrBool(node, "adj_x")) throw new UnsupportedNodeError(node, "adj_x");
    if (attrBool(node, "adj_y")) g.emit("Einsum", g.inputs(node), [g.output(node)], { equation: { string: "...ij,...kj->...ik" } });
    else g.emit("MatMul", g.inputs(node), [g.output(node)]);
  },
  BiasAdd: (node, g) => {
    if (attrString(node, "data_format") !== "NHWC") throw new UnsupportedNodeError(node, `data_format ${attrString(node, "data_format")}`);
    g.emit("Add", g.inputs(node), [g.output(node)]);
  },
  Conv2D: conv2d,
};
