import { fromBinary, fromJson, type DescEnum, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
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
    return invalidRequest(path, "type", "has the wrong type or an invalid value");
  }
  const enumName = unknownEnumName.exec(message);
  const enumDesc = enumName ? enumUnder(desc, enumName[1]!) : undefined;
  const enumPath = enumDesc && pathToType(desc, enumDesc.typeName);
  if (enumDesc && enumPath) return invalidRequest(enumPath, "enum", `must be one of ${protoEnumValues(enumDesc).join(", ")}`);
  const type = badType.exec(message);
  const path = type && type[1] !== desc.typeName ? pathToType(desc, type[1]!) : undefined;
  if (path) return invalidRequest(path, "type", "has the wrong type or an invalid value");
  return invalidRequest("body", "type", "must be a JSON object of the request message");
}

/** The JSON path of field `name` of message `typeName`, found in `desc` or a message under it. */
function fieldPath(desc: DescMessage, typeName: string, name: string): string {
  const owner = typeName === desc.typeName ? desc : messageUnder(desc, typeName);
  const jsonName = (owner && findField(owner, name)?.jsonName) ?? name;
  const prefix = owner && owner !== desc ? pathToType(desc, typeName) : undefined;
  return prefix ? `${prefix}.${jsonName}` : jsonName;
}

/** The first field path (depth-first, a few levels deep) whose message or enum is `typeName`. */
function pathToType(desc: DescMessage, typeName: string, depth = 0): string | undefined {
  for (const f of desc.fields) {
    if (f.enum?.typeName === typeName || f.message?.typeName === typeName) return f.jsonName;
  }
  if (depth >= 3) return undefined;
  for (const f of desc.fields) {
    const inner = f.message && !f.message.typeName.startsWith("google.protobuf.") ? pathToType(f.message, typeName, depth + 1) : undefined;
    if (inner) return `${f.jsonName}.${inner}`;
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
