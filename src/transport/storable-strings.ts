import { ScalarType, type DescField, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { invalidRequest } from "../errors/api-error.js";

// Postgres text cannot hold U+0000, and a lone UTF-16 surrogate (JSON can carry "\ud800") is either
// refused or silently replaced. Every string of every request is checked here, once and generically,
// before any handler runs, so such input is an invalid_request naming the field instead of a 500 (or a
// quota counted for a call that fails).

export type UnstorableRule = "nul_character" | "lone_surrogate";

export interface UnstorableString {
  /** Path in the naming of validation errors: memories[1].tags[0], metadata.someKey. */
  field: string;
  rule: UnstorableRule;
}

// Matches no well-formed string without U+0000; most strings are rejected by this one test.
const suspect = /[\u0000\ud800-\udfff]/;
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function ruleOf(text: string): UnstorableRule | undefined {
  if (!suspect.test(text)) return undefined;
  if (text.includes("\u0000")) return "nul_character";
  return loneSurrogate.test(text) ? "lone_surrogate" : undefined;
}

// Well-known types protobuf-es holds as plain JSON (Struct) or as a bare value (wrappers).
const jsonTypes = new Set(["google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"]);

/** Path segments of the value being checked; joined only when a string is refused. */
type Path = Array<string | number>;

/** A field path as errors name it, with the characters it refuses escaped (keys may contain them). */
function pathOf(path: Path): string {
  let out = "";
  for (const part of path) {
    out += typeof part === "number" ? `[${part}]` : out === "" ? part : `.${part}`;
  }
  return out.replace(/[\u0000\ud800-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function checkString(text: string, path: Path): UnstorableString | undefined {
  const rule = ruleOf(text);
  return rule && { field: pathOf(path), rule };
}

function checkJson(value: JsonValue, path: Path): UnstorableString | undefined {
  if (typeof value === "string") return checkString(value, path);
  if (value === null || typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const found = checkJson(value[i]!, path);
      path.pop();
      if (found) return found;
    }
    return undefined;
  }
  for (const key in value) {
    path.push(key);
    const found = checkString(key, path) ?? checkJson(value[key]!, path);
    path.pop();
    if (found) return found;
  }
  return undefined;
}

/** A singular message value: a message, or the JSON / bare value protobuf-es unboxes some well-known types to. */
function checkMessageValue(desc: DescMessage, value: unknown, path: Path): UnstorableString | undefined {
  if (typeof value === "string") return checkString(value, path);
  if (value === null || typeof value !== "object") return undefined;
  if (jsonTypes.has(desc.typeName) && !("$typeName" in value)) return checkJson(value as JsonValue, path);
  return checkMessage(desc, value as Record<string, unknown>, path);
}

function checkElement(field: DescField, value: unknown, path: Path): UnstorableString | undefined {
  if (typeof value === "string") return checkString(value, path);
  return field.message ? checkMessageValue(field.message, value, path) : undefined;
}

function checkField(field: DescField, value: unknown, path: Path): UnstorableString | undefined {
  switch (field.fieldKind) {
    case "scalar":
      return field.scalar === ScalarType.STRING && typeof value === "string" ? checkString(value, path) : undefined;
    case "enum":
      return undefined;
    case "message":
      return checkMessageValue(field.message, value, path);
    case "list": {
      if (field.listKind === "enum" || (field.listKind === "scalar" && field.scalar !== ScalarType.STRING)) return undefined;
      const list = value as unknown[];
      for (let i = 0; i < list.length; i++) {
        path.push(i);
        const found = checkElement(field, list[i], path);
        path.pop();
        if (found) return found;
      }
      return undefined;
    }
    case "map": {
      const map = value as Record<string, unknown>;
      for (const key in map) {
        path.push(key);
        const found = checkString(key, path) ?? checkElement(field, map[key], path);
        path.pop();
        if (found) return found;
      }
      return undefined;
    }
  }
}

function checkMessage(desc: DescMessage, message: Record<string, unknown>, path: Path): UnstorableString | undefined {
  for (const field of desc.fields) {
    let value: unknown;
    if (field.oneof) {
      const selected = message[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
      if (selected?.case !== field.localName) continue;
      value = selected.value;
    } else {
      value = message[field.localName];
    }
    if (value === undefined || value === null) continue;
    path.push(field.jsonName);
    const found = checkField(field, value, path);
    path.pop();
    if (found) return found;
  }
  return undefined;
}

/** The first string of a decoded request Postgres could not store, in field order; one pass over the message. */
export function findUnstorableString(desc: DescMessage, message: object): UnstorableString | undefined {
  return checkMessage(desc, message as Record<string, unknown>, []);
}

/** Throws invalid_request naming the first string of the request Postgres could not store. */
export function assertStorableStrings(desc: DescMessage, message: object): void {
  const found = findUnstorableString(desc, message);
  if (!found) return;
  const problem = found.rule === "nul_character" ? "must not contain the NUL character (U+0000)" : "must not contain a lone UTF-16 surrogate";
  throw invalidRequest(found.field, found.rule, problem);
}
