import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UseLiteEmbedder } from "../../src/embeddings/use-lite-embedder.js";
import { convertTfGraph } from "../../src/embeddings/use-lite-onnx/convert.js";
import type { TfGraph, TfNode } from "../../src/embeddings/use-lite-onnx/tf-graph.js";

// Texts that reach every path of the graph: no tokens (""), one token, unknown characters, several
// scripts, the 256-token cut, and lengths from 1 to 256 tokens, so batches mix short and long rows.
const varied = [
  "",
  " ",
  "memory",
  "Hi",
  "The user prefers dark mode in every editor",
  "Deploys to production happen every Tuesday, unless the release manager is on vacation.",
  "Ünïcödé façade naïve café résumé",
  "日本語のテキストも埋め込みます。東京の天気は晴れです。",
  "Привет, как дела? Сервер упал ночью из-за нехватки памяти.",
  "مرحبا بالعالم، هذه جملة باللغة العربية",
  "emoji 🎉🚀 and a flag 🇩🇪 and a family 👨‍👩‍👧",
  "a\u0301 combining accents e\u0301 and zero\u200bwidth spaces",
  "\u0000\u0001 control characters \u007f",
  "ALL CAPS SHOUTING ABOUT THE BUILD FAILING AGAIN",
  "snake_case_identifier camelCaseIdentifier kebab-case-identifier",
  "https://example.com/path?query=1&other=two#fragment",
  "user@example.com called +49 30 1234567 at 09:30 on 2026-01-31",
  "const x = await fetch(url).then((r) => r.json()); // TODO: retry",
  "SELECT id, content FROM memories WHERE container = $1 ORDER BY created_at DESC LIMIT 10;",
  "3.14159 2.71828 1.41421 42 1e-9 -17 0x1F",
  "????!!!!....,,,,;;;;",
  "word ".repeat(30).trim(),
  "the the the the the the the the the the the the",
  "Maria from the data platform team moved its on-call rotation to the Lisbon office on 2024-03-05.",
  "Kenji, the on-call engineer this week, asked for a weekly summary starting Monday after a long discussion in the architecture channel.",
  "Backups are stored in an S3 bucket in Frankfurt and copied to a second region every night at 02:00 UTC.",
  "She is allergic to peanuts.",
  "Do not commit secrets to the repository; use the vault and rotate keys every 90 days.",
  "The quick brown fox jumps over the lazy dog. ".repeat(6),
  "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.",
  "A".repeat(300),
  "supercalifragilisticexpialidocious antidisestablishmentarianism",
  "tab\tseparated\tvalues\nand\nnew\nlines",
  "   leading and trailing spaces   ",
  "Mixed 中文 and English in one sentence with numbers 123",
  "Ελληνικά κείμενα και עברית טקסט",
  "The invoice must be paid within thirty days of receipt.",
  "Why did the deployment fail? Because the migration locked the table for ten minutes.",
  "yes",
  "no",
  "OK",
  "The meeting was moved to Thursday afternoon, room 4.12, bring the quarterly numbers.",
  // A long memory: 2,000 characters, well past the 256-token cut.
  Array.from({ length: 60 }, (_, i) => `fact ${i} about the payments service and its retries`).join("; ").slice(0, 2000),
  Array.from({ length: 400 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 37) % 2000))).join(""),
  "end.",
];

const maxDifference = (a: Float32Array[], b: Float32Array[]) =>
  Math.max(...a.map((v, i) => Math.max(...v.map((x, d) => Math.abs(x - b[i]![d]!)))));

let onnx: UseLiteEmbedder;
let tfjs: UseLiteEmbedder;

beforeAll(async () => {
  [onnx, tfjs] = await Promise.all([
    UseLiteEmbedder.create({ batchSize: 16, workers: 1, runtime: "onnx" }),
    UseLiteEmbedder.create({ batchSize: 16, workers: 1, runtime: "tfjs" }),
  ]);
});

afterAll(async () => {
  await Promise.all([onnx?.close(), tfjs?.close()]);
});

describe("USE-lite converted to ONNX", () => {
  it("gives the TF.js vectors to 1e-4 on varied texts, batched by length and one at a time", async () => {
    expect(varied.length).toBeGreaterThanOrEqual(45);
    const [fromOnnx, fromTfjs] = await Promise.all([onnx.embed(varied), tfjs.embed(varied)]);
    expect(fromOnnx).toHaveLength(varied.length);
    expect(maxDifference(fromOnnx, fromTfjs)).toBeLessThan(1e-4);

    // Alone, a text is its own batch with no padding; the vectors must not depend on the batch.
    const alone = [0, 2, 7, 10, 30, 42];
    const singles = await Promise.all(alone.map((i) => onnx.embed([varied[i]!]).then(([v]) => v!)));
    expect(maxDifference(singles, alone.map((i) => fromTfjs[i]!))).toBeLessThan(1e-4);
  });
});

describe("the converter", () => {
  const node = (op: string, attr: TfNode["attr"] = {}): TfNode => ({ name: "n", op, input: ["x"], attr });
  const graph = (...nodes: TfNode[]): TfGraph => ({
    nodes: [{ name: "x", op: "Placeholder", attr: { dtype: { type: 1 } } }, ...nodes],
    weights: new Map(),
  });

  it("refuses an op it has no mapping for, naming the node", () => {
    expect(() => convertTfGraph(graph(node("Erf")), "test")).toThrow("Erf node n: the op is not supported");
  });

  it("refuses an attribute value it does not map rather than converting it wrongly", () => {
    expect(() => convertTfGraph(graph(node("MatMul", { transpose_a: { b: true } })), "test")).toThrow(
      "MatMul node n: a transposed operand is not supported",
    );
  });
});
