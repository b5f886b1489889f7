import { getOption, hasOption, type DescField, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { omit_empty, written_with } from "../../../gen/agent/v1/json_options_pb.js";
import { invalidRequest } from "../../errors/api-error.js";
import { restEnumName, restEnumValues } from "./enum-names.js";

// REST JSON is proto3 JSON with every field written, and three differences: enums use their REST names,
// lists marked (agent.v1.omit_empty) are left out when empty (those marked (agent.v1.written_with) when
// their sibling is absent), and unknown fields are reported with their full path. The walks follow the
// message descriptors.

type JsonObject = Record<string, JsonValue>;

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
const isWellKnown = (m: DescMessage) => m.typeName.startsWith("google.protobuf.");

const fieldIndex = new WeakMap<DescMessage, Map<string, DescField>>();
function fieldsByJsonKey(desc: DescMessage): Map<string, DescField> {
  let index = fieldIndex.get(desc);
  if (!index) {
    index = new Map();
    for (const f of desc.fields) index.set(f.jsonName, f).set(f.name, f);
    fieldIndex.set(desc, index);
  }
  return index;
}

export function findField(desc: DescMessage, key: string): DescField | undefined {
  return fieldsByJsonKey(desc).get(key);
}

function enumFromRest(field: DescField & { enum: NonNullable<DescField["enum"]> }, value: JsonValue, path: string): JsonValue {
  if (typeof value !== "string") return value;
  const desc = field.enum;
  const byRest = desc.values.find((v) => v.number !== 0 && restEnumName(desc, v.name) === value.toLowerCase());
  if (byRest) return byRest.name;
  if (desc.values.some((v) => v.name === value)) return value;
  throw invalidRequest(path, "enum", `must be one of ${restEnumValues(desc).join(", ")}`);
}

/** Checks a REST body against a message and rewrites REST enum names to proto names, in place. */
export function fromRestJson(desc: DescMessage, json: unknown, path: string): JsonObject {
  if (!isObject(json)) throw invalidRequest(path || "body", "type", "must be a JSON object");
  for (const [key, value] of Object.entries(json)) {
    const field = findField(desc, key);
    const at = path ? `${path}.${key}` : key;
    if (!field) throw invalidRequest(at, "unknown_field", "is not a known field");
    if (value === null) continue;
    json[key] = mapField(field, value, at, (m, v, p) => fromRestJson(m, v, p), (f, v, p) => enumFromRest(f, v, p));
  }
  return json;
}

function mapField(
  field: DescField,
  value: JsonValue,
  path: string,
  onMessage: (m: DescMessage, v: JsonValue, path: string) => JsonValue,
  onEnum: (f: DescField & { enum: NonNullable<DescField["enum"]> }, v: JsonValue, path: string) => JsonValue,
): JsonValue {
  const message = field.message && !isWellKnown(field.message) ? field.message : undefined;
  const hasEnum = field.enum !== undefined;
  if (!message && !hasEnum) return value;
  const one = (v: JsonValue, p: string): JsonValue =>
    v === null ? v : message ? onMessage(message, v, p) : onEnum(field as never, v, p);
  if (field.fieldKind === "list" && Array.isArray(value)) return value.map((v, i) => one(v, `${path}[${i}]`));
  if (field.fieldKind === "map" && isObject(value)) {
    for (const [k, v] of Object.entries(value)) value[k] = one(v, `${path}.${k}`);
    return value;
  }
  return one(value, path);
}

/** When a list is left out of REST JSON: never, when empty, or when the sibling it is written with is absent. */
type Omission = false | "empty" | { without: string };
const omissions = new WeakMap<DescField, Omission>();
function omissionOf(field: DescField): Omission {
  let omission = omissions.get(field);
  if (omission === undefined) {
    const sibling = hasOption(field, written_with) ? getOption(field, written_with) : "";
    const jsonName = sibling && field.parent.fields.find((f) => f.name === sibling)?.jsonName;
    if (sibling && !jsonName) throw new Error(`${field.parent.typeName}.${field.name}: written_with names no field ${sibling}`);
    omission = jsonName ? { without: jsonName } : hasOption(field, omit_empty) && getOption(field, omit_empty) ? "empty" : false;
    omissions.set(field, omission);
  }
  return omission;
}

function isOmitted(field: DescField, value: JsonValue, message: JsonObject): boolean {
  const omission = omissionOf(field);
  if (omission === false) return false;
  if (omission === "empty") return Array.isArray(value) && value.length === 0;
  return message[omission.without] === undefined || message[omission.without] === null;
}

const rewritten = new WeakMap<DescMessage, boolean>();
/** Whether REST output of this message needs rewriting at all (it holds an enum or an omit_empty list somewhere). */
function needsRewrite(desc: DescMessage, seen = new Set<DescMessage>()): boolean {
  const known = rewritten.get(desc);
  if (known !== undefined) return known;
  if (seen.has(desc)) return false;
  seen.add(desc);
  const result = desc.fields.some(
    (f) => f.enum !== undefined || omissionOf(f) !== false || (f.message !== undefined && !isWellKnown(f.message) && needsRewrite(f.message, seen)),
  );
  rewritten.set(desc, result);
  return result;
}

/** Rewrites proto3 JSON output (every field written) to REST JSON, in place. */
export function toRestJson(desc: DescMessage, json: JsonValue): JsonValue {
  if (!isObject(json) || !needsRewrite(desc)) return json;
  for (const [key, value] of Object.entries(json)) {
    const field = findField(desc, key);
    if (!field || value === null) continue;
    if (isOmitted(field, value, json)) {
      delete json[key];
      continue;
    }
    json[key] = mapField(
      field,
      value,
      key,
      (m, v) => toRestJson(m, v),
      (f, v) => (typeof v === "string" ? restEnumName(f.enum, v) : v),
    );
  }
  return json;
}
