import { fromBinary, fromJson, ScalarType, type DescEnum, type DescField, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { invalidRequest } from "../errors/api-error.js";
import { protoEnumValues } from "./rest/enum-names.js";
import { findField } from "./rest/rest-json.js";

// protobuf-es explains decode failures in messages that name proto types ("cannot decode field
// agent.v1.GetMemoryRequest.id from JSON: …"). Callers get the field's JSON name and a rule instead.

const unknownKey = /key "([^"]*)" is unknown/;
const badField = /cannot decode field ([\w.]+)\.(\w+) from JSON/;
const badType = /cannot decode (?:message|enum) ([\w.]+) from JSON/;
// A string that names no value of an enum; only Connect JSON gets here (REST checks its enum names first).
const unknownEnumName = /cannot decode enum ([\w.]+) from JSON: "/;

/** The error model's answer for a JSON value protobuf-es could not decode as `desc`. */
export function jsonDecodeError(desc: DescMessage, err: unknown): ConnectError {
  const message = err instanceof Error ? err.message : "";
  const unknown = unknownKey.exec(message);
  if (unknown) return invalidRequest(shortName(unknown[1]!), "unknown_field", "is not a known field");
  const field = badField.exec(message);
  if (field) {
    const path = fieldPath(desc, field[1]!, field[2]!);
    // Postgres cannot store a lone surrogate; protobuf-es refuses one in a string field as "invalid UTF8".
    if (message.endsWith("invalid UTF8")) return invalidRequest(path, "lone_surrogate", "holds a lone UTF-16 surrogate");
    const owner = field[1] === desc.typeName ? desc : messageUnder(desc, field[1]!);
    const decoded = owner && findField(owner, field[2]!);
    return invalidRequest(path, "type", decoded ? `expected ${expectedValue(decoded)}` : "has the wrong type or an invalid value");
  }
  const enumName = unknownEnumName.exec(message);
  const enumDesc = enumName ? enumUnder(desc, enumName[1]!) : undefined;
  const enumPath = enumDesc && fieldOfType(desc, enumDesc.typeName)?.path;
  if (enumDesc && enumPath) return invalidRequest(enumPath, "enum", `must be one of ${protoEnumValues(enumDesc).join(", ")}`);
  const type = badType.exec(message);
  const typed = type && type[1] !== desc.typeName ? fieldOfType(desc, type[1]!) : undefined;
  if (typed) return invalidRequest(typed.path, "type", `expected ${expectedValue(typed.field)}`);
  return invalidRequest("body", "type", "must be a JSON object of the request message");
}

/** The JSON path of field `name` of message `typeName`, found in `desc` or a message under it. */
function fieldPath(desc: DescMessage, typeName: string, name: string): string {
  const owner = typeName === desc.typeName ? desc : messageUnder(desc, typeName);
  const jsonName = (owner && findField(owner, name)?.jsonName) ?? name;
  const prefix = owner && owner !== desc ? fieldOfType(desc, typeName)?.path : undefined;
  return prefix ? `${prefix}.${jsonName}` : jsonName;
}

/** The first field (depth-first, a few levels deep) whose message or enum is `typeName`, with its path. */
function fieldOfType(desc: DescMessage, typeName: string, depth = 0): { path: string; field: DescField } | undefined {
  for (const f of desc.fields) {
    if (f.enum?.typeName === typeName || f.message?.typeName === typeName) return { path: f.jsonName, field: f };
  }
  if (depth >= 3) return undefined;
  for (const f of desc.fields) {
    const inner = f.message && !f.message.typeName.startsWith("google.protobuf.") ? fieldOfType(f.message, typeName, depth + 1) : undefined;
    if (inner) return { path: `${f.jsonName}.${inner.path}`, field: inner.field };
  }
  return undefined;
}

function enumUnder(desc: DescMessage, typeName: string, depth = 0): DescEnum | undefined {
  for (const f of desc.fields) {
    if (f.enum?.typeName === typeName) return f.enum;
    const inner = f.message && depth < 3 && !f.message.typeName.startsWith("google.protobuf.") ? enumUnder(f.message, typeName, depth + 1) : undefined;
    if (inner) return inner;
  }
  return undefined;
}

function messageUnder(desc: DescMessage, typeName: string, depth = 0): DescMessage | undefined {
  for (const f of desc.fields) {
    if (!f.message || f.message.typeName.startsWith("google.protobuf.")) continue;
    if (f.message.typeName === typeName) return f.message;
    const inner = depth < 3 ? messageUnder(f.message, typeName, depth + 1) : undefined;
    if (inner) return inner;
  }
  return undefined;
}

const scalarNames: Partial<Record<ScalarType, [one: string, many: string]>> = {
  [ScalarType.STRING]: ["a string", "strings"],
  [ScalarType.BOOL]: ["true or false", "booleans"],
  [ScalarType.BYTES]: ["a base64 string", "base64 strings"],
  [ScalarType.DOUBLE]: ["a number", "numbers"],
  [ScalarType.FLOAT]: ["a number", "numbers"],
  [ScalarType.INT32]: ["a 32-bit integer", "32-bit integers"],
  [ScalarType.UINT32]: ["a non-negative 32-bit integer", "non-negative 32-bit integers"],
};

/** What a JSON value of the field must be, as a caller reads it: "an array of strings", "a 32-bit integer". */
export function expectedValue(field: DescField): string {
  const [one, many] =
    field.message !== undefined
      ? field.message.typeName === "google.protobuf.Struct"
        ? ["a JSON object", "JSON objects"]
        : ["an object", "objects"]
      : field.enum !== undefined
        ? [`one of ${protoEnumValues(field.enum).join(", ")}`, `values among ${protoEnumValues(field.enum).join(", ")}`]
        : (scalarNames[field.scalar!] ?? ["an integer", "integers"]);
  if (field.fieldKind === "list") return `an array of ${many}`;
  if (field.fieldKind === "map") return `an object whose values are ${many}`;
  return one;
}

// An unknown key is echoed back; a megabyte of key is not.
const shortName = (key: string) => (key.length > 64 ? `${key.slice(0, 64)}…` : key);

export function decodeJsonValue<D extends DescMessage>(desc: D, json: JsonValue): MessageShape<D> {
  try {
    return fromJson(desc, json, { ignoreUnknownFields: false });
  } catch (err) {
    throw jsonDecodeError(desc, err);
  }
}

export function decodeJsonText<D extends DescMessage>(desc: D, text: string): MessageShape<D> {
  let json: JsonValue;
  try {
    json = JSON.parse(text) as JsonValue;
  } catch {
    throw invalidRequest("body", "format", "is not valid JSON");
  }
  return decodeJsonValue(desc, json);
}

export function decodeBinary<D extends DescMessage>(desc: D, bytes: Uint8Array): MessageShape<D> {
  try {
    return fromBinary(desc, bytes);
  } catch {
    throw invalidRequest("body", "format", "is not a valid protobuf encoding of the request message");
  }
}
