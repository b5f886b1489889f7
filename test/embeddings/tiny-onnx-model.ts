// Builds a tiny BERT-like feature-extraction model on disk for the transformers provider tests:
// an ONNX graph whose last_hidden_state is a Gather from a random token-embedding table, a WordPiece
// tokenizer and the config files transformers.js reads. The ONNX protobuf is encoded by hand (a few
// message types) so the test needs no ONNX tooling.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

const specialTokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const words = ["the", "cat", "dog", "sat", "on", "mat", "a", "rug", "revenue", "grew", "quarter", "##ly", "memory", "agent"];
export const vocabulary = [...specialTokens, ...words];
export const hiddenSize = 8;

// --- protobuf wire format: varints (wire type 0) and length-delimited fields (wire type 2) ---
type Field = Uint8Array;

function varint(value: number | bigint): number[] {
  let v = BigInt(value);
  const out: number[] = [];
  do {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? byte | 0x80 : byte);
  } while (v > 0n);
  return out;
}

const intField = (field: number, value: number): Field => Uint8Array.from([...varint(field << 3), ...varint(value)]);

function bytesField(field: number, bytes: Uint8Array): Field {
  return Uint8Array.from([...varint((field << 3) | 2), ...varint(bytes.length), ...bytes]);
}

const stringField = (field: number, s: string) => bytesField(field, new TextEncoder().encode(s));
const message = (...fields: Field[]): Uint8Array => Buffer.concat(fields);

// --- ONNX messages (field numbers from onnx.proto) ---
const elemFloat = 1;
const elemInt64 = 7;

function valueInfo(name: string, elemType: number, dims: Array<string | number>): Field {
  const shape = message(
    ...dims.map((d) => bytesField(1, typeof d === "number" ? message(intField(1, d)) : message(stringField(2, d)))),
  );
  const tensorType = message(intField(1, elemType), bytesField(2, shape));
  return message(stringField(1, name), bytesField(2, message(bytesField(1, tensorType))));
}

function floatTensor(name: string, dims: number[], values: Float32Array): Field {
  return message(
    ...dims.map((d) => intField(1, d)),
    intField(2, elemFloat),
    stringField(8, name),
    bytesField(9, new Uint8Array(values.buffer, values.byteOffset, values.byteLength)),
  );
}

function onnxModel(table: Float32Array): Uint8Array {
  const gather = message(
    stringField(1, "embeddings"),
    stringField(1, "input_ids"),
    stringField(2, "last_hidden_state"),
    stringField(3, "lookup"),
    stringField(4, "Gather"),
  );
  const graph = message(
    bytesField(1, gather),
    stringField(2, "tiny"),
    bytesField(5, floatTensor("embeddings", [vocabulary.length, hiddenSize], table)),
    bytesField(11, valueInfo("input_ids", elemInt64, ["batch", "sequence"])),
    bytesField(11, valueInfo("attention_mask", elemInt64, ["batch", "sequence"])),
    bytesField(12, valueInfo("last_hidden_state", elemFloat, ["batch", "sequence", hiddenSize])),
  );
  const opset = message(stringField(1, ""), intField(2, 13));
  return message(intField(1, 8), stringField(2, "agentmem-test"), bytesField(7, graph), bytesField(8, opset));
}

/** Deterministic pseudo-random weights (xorshift), so expected vectors can be computed in the test. */
function randomTable(): Float32Array {
  const table = new Float32Array(vocabulary.length * hiddenSize);
  let s = 0x9e3779b9;
  for (let i = 0; i < table.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    table[i] = ((s >>> 0) / 0xffffffff) * 2 - 1;
  }
  return table;
}

function tokenizerJson(): object {
  const special = (content: string) => ({
    id: vocabulary.indexOf(content),
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  const token = (id: string) => ({ SpecialToken: { id, type_id: 0 } });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: specialTokens.map(special),
    normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [token("[CLS]"), { Sequence: { id: "A", type_id: 0 } }, token("[SEP]")],
      pair: [token("[CLS]"), { Sequence: { id: "A", type_id: 0 } }, token("[SEP]"), { Sequence: { id: "B", type_id: 1 } }, token("[SEP]")],
      special_tokens: Object.fromEntries(
        ["[CLS]", "[SEP]"].map((t) => [t, { id: t, ids: [vocabulary.indexOf(t)], tokens: [t] }]),
      ),
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: {
      type: "WordPiece",
      unk_token: "[UNK]",
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocabulary.map((t, i) => [t, i])),
    },
  };
}

export interface TinyModel {
  /** Row of the embedding table for a vocabulary token, i.e. its last_hidden_state. */
  tokenVector(token: string): Float32Array;
}

/** Writes the model as `root/name` and returns its weights. */
export function writeTinyModel(root: string, name: string): TinyModel {
  const dir = path.join(root, name);
  mkdirSync(path.join(dir, "onnx"), { recursive: true });
  const table = randomTable();
  writeFileSync(path.join(dir, "onnx", "model.onnx"), onnxModel(table));
  writeFileSync(path.join(dir, "tokenizer.json"), JSON.stringify(tokenizerJson()));
  writeFileSync(
    path.join(dir, "tokenizer_config.json"),
    JSON.stringify({
      tokenizer_class: "BertTokenizer",
      do_lower_case: true,
      model_max_length: 64,
      pad_token: "[PAD]",
      unk_token: "[UNK]",
      cls_token: "[CLS]",
      sep_token: "[SEP]",
      mask_token: "[MASK]",
    }),
  );
  writeFileSync(
    path.join(dir, "config.json"),
    JSON.stringify({ model_type: "bert", architectures: ["BertModel"], hidden_size: hiddenSize, vocab_size: vocabulary.length }),
  );
  return {
    tokenVector: (token) => {
      const id = vocabulary.indexOf(token);
      if (id < 0) throw new Error(`${token} is not in the tiny vocabulary`);
      return table.slice(id * hiddenSize, (id + 1) * hiddenSize);
    },
  };
}
