import { createHash } from "node:crypto";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { MetadataFilter } from "./metadata-filter.js";

// The search index answers metadata filters as it answers tags: each memory carries the terms of its
// metadata in a list column, and a filter becomes "has all of these terms". A term stands for one key
// path and what is there: a scalar or an array (equal as a whole), or "an object". Postgres' jsonb
// containment, with the filter's arrays compared for equality (metadata-filter.ts), holds exactly when
// the memory's terms include the filter's: containment descends objects key by key, compares scalars,
// and a nested array contains a scalar only at the top level of a jsonb value, never inside an object.
// Terms are hashes (bounded size, whatever the value); a collision could only add a candidate, which the
// re-check in Postgres removes.

const isObject = (v: JsonValue): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** JSON with every object's keys sorted: jsonb compares objects as key sets. */
const canonical = (value: JsonValue) =>
  JSON.stringify(value, (_key, v: JsonValue) => (isObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v));

// A path is hashed one key at a time, so a deep path costs what its keys do (metadata has no depth limit).
const childPath = (parent: Buffer, key: string) => createHash("sha256").update(parent).update(JSON.stringify(key)).digest();
const valueTerm = (path: Buffer, value: JsonValue) => createHash("sha256").update(path).update("=").update(canonical(value)).digest("base64url").slice(0, 22);
const objectTerm = (path: Buffer) => createHash("sha256").update(path).update("{}").digest("base64url").slice(0, 22);
const root = Buffer.alloc(32);

interface Walk {
  path: Buffer;
  object: JsonObject;
}

/** The terms of a memory's metadata: every key path with its value, and every key path holding an object. */
export function metadataTerms(metadata: JsonObject): string[] {
  const terms: string[] = [];
  const stack: Walk[] = [{ path: root, object: metadata }];
  while (stack.length > 0) {
    const { path, object } = stack.pop()!;
    for (const [key, child] of Object.entries(object)) {
      const at = childPath(path, key);
      if (isObject(child)) {
        terms.push(objectTerm(at));
        stack.push({ path: at, object: child });
      } else {
        terms.push(valueTerm(at, child));
      }
    }
  }
  return terms;
}

/** The terms a memory's metadata must all have to match the filter. */
export function filterTerms(filter: MetadataFilter): string[] {
  const terms: string[] = [];
  const stack: Walk[] = [{ path: root, object: filter.contains }];
  while (stack.length > 0) {
    const { path, object } = stack.pop()!;
    for (const [key, child] of Object.entries(object)) {
      const at = childPath(path, key);
      // A non-empty object is matched by its leaves; an empty one asks only for an object there.
      if (!isObject(child)) terms.push(valueTerm(at, child));
      else if (Object.keys(child).length === 0) terms.push(objectTerm(at));
      else stack.push({ path: at, object: child });
    }
  }
  return terms;
}
