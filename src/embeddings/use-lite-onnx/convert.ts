// Converts a TF.js graph model to an ONNX model, in memory.
import { GraphBuilder, UnsupportedNodeError, attrType, onnxType } from "./graph-builder.js";
import { encodeModel, type OnnxValueInfo } from "./onnx-writer.js";
import { opTable } from "./op-table.js";
import type { TfGraph, TfNode } from "./tf-graph.js";

const opset = 18;

const producers = (node: TfNode) => (node.input ?? []).map((ref) => ref.replace(/^\^/, "").replace(/:\d+$/, ""));

function placeholder(node: TfNode): OnnxValueInfo {
  const dims = (node.attr?.shape?.shape?.dim ?? []).map((d, i) => (Number(d.size) < 0 ? `${node.name}_${i}` : Number(d.size)));
  return { name: node.name, dataType: onnxType(attrType(node, "dtype")), dims };
}

/** The graph's outputs: the nodes nothing else reads. */
function sinks(nodes: TfNode[]): TfNode[] {
  const read = new Set(nodes.flatMap(producers));
  return nodes.filter((n) => !read.has(n.name) && n.op !== "Const" && n.op !== "Placeholder");
}

/** Encodes `graph` as an ONNX ModelProto; throws on any op or attribute value it cannot map faithfully. */
export function convertTfGraph(graph: TfGraph, name: string): Uint8Array {
  const g = new GraphBuilder(graph);
  const inputs: OnnxValueInfo[] = [];
  const converted = new Set<string>();
  for (const node of graph.nodes) {
    // ONNX wants producers before consumers; TF.js writes GraphDefs that way, so check rather than sort.
    const early = producers(node).find((p) => !converted.has(p));
    if (early !== undefined) throw new Error(`${node.name} reads ${early} before it is defined`);
    converted.add(node.name);
    if (node.op === "Placeholder") inputs.push(placeholder(node));
    else if (node.op !== "Const") {
      const convert = opTable[node.op];
      if (!convert) throw new UnsupportedNodeError(node, "the op");
      convert(node, g);
    }
  }
  const outputs = sinks(graph.nodes).map((node) => ({ name: g.output(node), dataType: onnxType(attrType(node, "T")) }));
  return encodeModel({ name, nodes: g.nodes, initializers: g.initializers, inputs, outputs }, opset, "agentmem");
}
