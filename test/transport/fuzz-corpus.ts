import { fromBinary, fromJson, ScalarType, toBinary, toJson, type DescField, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { prng } from "../../bench/lib/synthetic.js";

// A seeded generator of hostile requests: every value is drawn from one PRNG, so a failing request
// is reproduced by the same seed and index. Values are shaped by the request descriptors (so most
// requests reach validation) and regularly of the wrong type, huge, deep or oddly encoded.

export interface Draw {
  random(): number;
  int(n: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
}

export function draw(seed: number): Draw {
  const random = prng(seed);
  const int = (n: number) => Math.floor(random() * n);
  return { random, int, chance: (p) => random() < p, pick: (items) => items[int(items.length)]! };
}

/**
 * Strings no request may break the server with. NUL, lone surrogates and very long runs of one
 * character are kept apart (knownHostileStrings): other work fixes their handling.
 */
const oddStrings = [
  "",
  " ",
  "Deploys happen on Tuesdays",
  "مرحبا بالعالم، هذه ذاكرة",
  "\u202eevil\u202c right-to-left override",
  "e\u0301\u0302\u0303\u0304\u0305".repeat(40),
  "👩‍👩‍👧‍👦🚀🏳️‍🌈 emoji",
  "\uffff\ufffe\ufeff",
  "zero\u200bwidth\u2060joiner",
  "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ℌ𝔢𝔩𝔩𝔬",
  "<script>alert(1)</script>",
  "'; drop table memories; --",
  "%s%n%x {0} ${x} {{x}}",
  "a".repeat(300),
  "word ".repeat(4000),
  "\\u0000 escaped but not a NUL",
  "line\r\nbreak\ttab\u000b\u000c",
  "\u0001\u0002\u0003\u001f\u007f control characters",
];

const badIds = [
  "",
  "mem_",
  "mem_01arz3ndektsv4rrffq69g5fav",
  "MEM_01ARZ3NDEKTSV4RRFFQ69G5FAV",
  "key_01arz3ndektsv4rrffq69g5fav",
  "trc_01arz3ndektsv4rrffq69g5fav",
  "../../etc/passwd",
  "mem_💥",
  "mem_" + "z".repeat(5000),
  "mem_01arz3ndektsv4rrffq69g5fav?x=1",
  " mem_01arz3ndektsv4rrffq69g5fav ",
];

const dates = [
  "2026-01-31",
  "2026-01-31T09:30:00Z",
  "2026-01-31T09:30:00+02:00",
  "2026-13-45",
  "2026-02-30",
  "0000-00-00T00:00:00Z",
  "9999-12-31T23:59:59Z",
  "10000-01-01T00:00:00Z",
  "2026-01-31T09:30:00+25:00",
  "yesterday",
  "",
  "1e9",
];

const numbers: JsonValue[] = [0, -0, 1, -1, 0.5, 1e308, -1e308, 5e-324, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), "12", "NaN", "Infinity", "-Infinity", "1e999", "abc"];

export function oddString(d: Draw): string {
  if (d.chance(0.02)) return "x".repeat(100) + " " + "long words ".repeat(100_000); // over 1 MB
  if (d.chance(0.2)) {
    // A random mix of code points from several scripts and planes.
    const ranges = [[0x20, 0x7e], [0xa0, 0x24f], [0x590, 0x6ff], [0x300, 0x36f], [0x4e00, 0x4fff], [0x1f300, 0x1f64f], [0xe000, 0xf8ff]];
    let s = "";
    for (let i = d.int(60); i > 0; i--) {
      const [lo, hi] = d.pick(ranges)!;
      s += String.fromCodePoint(lo! + d.int(hi! - lo! + 1));
      if (d.chance(0.2)) s += " ";
    }
    return s;
  }
  return d.pick(oddStrings);
}

/** NUL, lone surrogates and a 16 KiB run of one character. */
export const knownHostileStrings = {
  nul: "before\u0000after",
  loneHighSurrogate: "broken \ud800 pair",
  loneLowSurrogate: "\udc00 leading low surrogate",
  longRun: "a".repeat(16_384),
  /** 16 KiB of seeded random words, different for every seed: the dearest text for the full-text index. */
  variedWords(seed: number): string {
    let s = seed;
    let text = "";
    while (text.length < 16_384) {
      text += Array.from({ length: 1 + (s % 9) }, () => String.fromCharCode(97 + ((s = (s * 48271) % 2147483647) % 26))).join("") + " ";
    }
    return text.slice(0, 16_384);
  },
};

/** Any JSON value, sometimes deeply nested or very wide. */
export function anyJson(d: Draw, depth = 0): JsonValue {
  const roll = d.random();
  if (depth === 0 && roll < 0.04) return deep(d.pick([50, 500, 3000]), d.chance(0.5));
  if (depth === 0 && roll < 0.06) return Array.from({ length: 10_000 }, (_, i) => i);
  if (roll < 0.25) return d.pick(numbers);
  if (roll < 0.45) return oddString(d);
  if (roll < 0.5) return d.chance(0.5);
  if (roll < 0.55) return null;
  if (depth > 3 || roll < 0.75) return Array.from({ length: d.int(4) }, () => anyJson(d, depth + 4));
  const obj: Record<string, JsonValue> = {};
  for (let i = d.int(4); i > 0; i--) obj[d.chance(0.8) ? `k${d.int(100)}` : oddString(d)] = anyJson(d, depth + 1);
  return obj;
}

function deep(levels: number, asArrays: boolean): JsonValue {
  let value: JsonValue = 1;
  for (let i = 0; i < levels; i++) value = asArrays ? [value] : { a: value };
  return value;
}

/** A proto3 JSON object for `desc`, mostly well typed, with REST (lowercase) or proto enum names. */
export function messageJson(d: Draw, desc: DescMessage, enums: "rest" | "proto", depth = 0): Record<string, JsonValue> {
  const json: Record<string, JsonValue> = {};
  for (const field of desc.fields) {
    if (!d.chance(0.6)) continue;
    json[field.jsonName] = fieldJson(d, field, enums, depth);
  }
  if (d.chance(0.05)) json[d.chance(0.5) ? "unknownField" : oddString(d)] = anyJson(d);
  return json;
}

function fieldJson(d: Draw, field: DescField, enums: "rest" | "proto", depth: number): JsonValue {
  if (d.chance(0.07)) return anyJson(d);
  if (field.fieldKind === "list") {
    // Wide, not big: ten thousand short elements.
    if (d.chance(0.03)) return Array.from({ length: 10_000 }, (_, i) => (field.scalar === ScalarType.STRING ? `t${i % 97}` : i % 7));
    return Array.from({ length: d.int(4) }, () => singleJson(d, field, enums, depth));
  }
  if (field.fieldKind === "map") {
    const obj: Record<string, JsonValue> = {};
    for (let i = d.int(3); i > 0; i--) obj[oddString(d)] = singleJson(d, field, enums, depth);
    return obj;
  }
  return singleJson(d, field, enums, depth);
}

function singleJson(d: Draw, field: DescField, enums: "rest" | "proto", depth: number): JsonValue {
  const enumDesc = field.enum;
  if (enumDesc) {
    const value = d.pick(enumDesc.values);
    if (d.chance(0.1)) return d.pick([oddString(d), 1, 99, -1]);
    if (enums === "proto") return value.name;
    const prefix = enumDesc.name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase() + "_";
    return value.name.replace(prefix, "").toLowerCase();
  }
  const message = field.message;
  if (message) {
    switch (message.typeName) {
      case "google.protobuf.Timestamp":
        return d.pick(dates);
      case "google.protobuf.Struct":
        return d.chance(0.8) ? (anyJsonObject(d) as JsonValue) : anyJson(d);
      case "google.protobuf.Value":
        return anyJson(d);
      case "google.protobuf.FieldMask":
        return d.pick(["content", "content,tags", "metadata,validUntil", "nope", "", oddString(d)]);
      case "google.protobuf.Duration":
        return d.pick(["1s", "0.5s", "-1s", "x", "315576000001s"]);
    }
    if (message.typeName.startsWith("google.protobuf.")) return anyJson(d);
    return depth > 2 ? {} : messageJson(d, message, enums, depth + 1);
  }
  const name = field.name.toLowerCase();
  switch (field.scalar) {
    case ScalarType.STRING:
      if (name === "id" || name.endsWith("_id")) return d.chance(0.7) ? d.pick(badIds) : oddString(d);
      if (/(^|_)(at|from|until|since|before|after)$/.test(name)) return d.chance(0.7) ? d.pick(dates) : oddString(d);
      return oddString(d);
    case ScalarType.BOOL:
      return d.chance(0.8) ? d.chance(0.5) : d.pick(["true", 1, null]);
    case ScalarType.BYTES:
      return d.pick(["", "AAEC", "not base64!", oddString(d)]);
    default:
      return d.chance(0.6) ? d.pick([0, 1, 2, 5, 10, 100, 0.5, -1]) : d.pick(numbers);
  }
}

function anyJsonObject(d: Draw): Record<string, JsonValue> {
  const value = anyJson(d);
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : { v: value };
}

/** The binary encoding of a JSON object when protobuf-es accepts it, else random bytes; sometimes mutated. */
export function messageBytes(d: Draw, desc: DescMessage, json: Record<string, JsonValue>): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = toBinary(desc, fromJson(desc, json, { ignoreUnknownFields: true }));
  } catch {
    bytes = Uint8Array.from({ length: d.int(64) }, () => nonZeroByte(d));
  }
  if (bytes.length > 0 && d.chance(0.25)) {
    const mutated = Uint8Array.from(bytes);
    for (let i = 1 + d.int(4); i > 0; i--) mutated[d.int(mutated.length)] = nonZeroByte(d);
    if (!decodesWithNul(desc, mutated)) bytes = mutated;
  }
  if (d.chance(0.05)) bytes = bytes.subarray(0, d.int(bytes.length + 1));
  return bytes;
}

// A zero byte inside a string field is a NUL character: see knownHostileStrings.
const nonZeroByte = (d: Draw) => 1 + d.int(255);

/** Whether a mutation made a string field swallow a zero byte (a length prefix now covering one). */
function decodesWithNul(desc: DescMessage, bytes: Uint8Array): boolean {
  try {
    return JSON.stringify(toJson(desc, fromBinary(desc, bytes))).includes("\\u0000");
  } catch {
    return false;
  }
}

/** A JSON text of the object, or a broken or surprising one. */
export function jsonText(d: Draw, json: Record<string, JsonValue>): string {
  const text = JSON.stringify(json);
  const roll = d.random();
  if (roll < 0.05) return text.slice(0, d.int(text.length)); // cut off
  if (roll < 0.08) return d.pick(["[1, 2]", '"string"', "null", "1e999", "", "{", "{}}", "\u00ff\u00fe{}"]);
  if (roll < 0.1) return `{"content": "a", "content": "b", "type": "fact"}`; // duplicate keys
  if (roll < 0.12) return `{"confidence": 1${"0".repeat(400)}}`; // a number no double holds
  if (roll < 0.13) return `{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}`;
  if (roll < 0.14) {
    // Nesting far deeper than any object the test itself could stringify.
    const levels = d.pick([10_000, 100_000]);
    return `{"metadata": {"a": ${"[".repeat(levels)}${"]".repeat(levels)}}, "content": "deep", "type": "fact"}`;
  }
  return text;
}
