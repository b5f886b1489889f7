import type { JsonValue } from "@bufbuild/protobuf";

// What a tool answers a model by default. A model pays for every byte of an answer in tokens, so a
// tool whose REST answer explains itself at length answers only what an agent acts on, unless the
// call asks for the whole answer. REST, Connect and gRPC answer as the spec defines.

type JsonObject = Record<string, JsonValue>;

export interface LeanAnswer {
  /** The arguments the RPC is called with. */
  request(args: JsonObject): JsonObject;
  /** What the tool answers, from the RPC's REST JSON answer. */
  answer(args: JsonObject, json: JsonValue): JsonValue;
}

const isObject = (v: JsonValue | undefined): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** A recall item as a model needs it: what to read, and what it replaced when it replaced something. */
function leanRecallItem(item: JsonValue): JsonValue {
  if (!isObject(item)) return item;
  const lean: JsonObject = { id: item.id!, type: item.type!, content: item.content! };
  if (item.validUntil !== undefined) lean.validUntil = item.validUntil;
  if (Array.isArray(item.supersedes) && item.supersedes.length > 0) lean.supersedes = item.supersedes;
  return lean;
}

/**
 * recall: each memory's id, type, content, validUntil when set and supersedes when it replaced
 * something; the scores (`why`), the receipt and `_meta` only with `includeReceipt: true`. The RPC
 * is asked for receipts unless the caller declined them, since they carry `supersedes`.
 */
const recall: LeanAnswer = {
  request: (args) => (args.includeReceipt === undefined ? { ...args, includeReceipt: true } : args),
  answer: (args, json) => {
    if (args.includeReceipt === true || !isObject(json) || !Array.isArray(json.memories)) return json;
    return { memories: json.memories.map(leanRecallItem) };
  },
};

/** The tools that answer a lean view by default, by tool name. */
export const leanAnswers: ReadonlyMap<string, LeanAnswer> = new Map([["recall", recall]]);
