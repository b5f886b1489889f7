import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { invalidRequest } from "../errors/api-error.js";
import { memoryLimits } from "./memory-rules.js";

// A metadata filter is a JSON object that a memory's metadata must contain: every key path of the filter
// holds the given value. Postgres' jsonb containment (@>, answered by the GIN index on metadata) decides
// objects and scalars; it treats a nested array as "contains these elements", so an array given in the
// filter is also checked for equality at its key path.

export interface MetadataFilter {
  /** The filter as given: metadata @> contains. */
  contains: JsonObject;
  /** Key paths whose value is an array, which must be equal, not merely contained. */
  arrays: Array<{ path: string[]; value: JsonValue[] }>;
}

export const metadataFilterLimits = { keyPaths: 64, bytes: memoryLimits.metadataBytes } as const;

const isObject = (v: JsonValue): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** Validates a filter (null when absent or empty); field names the request field in errors. */
export function parseMetadataFilter(value: JsonObject | undefined, field: string): MetadataFilter | null {
  if (value === undefined || Object.keys(value).length === 0) return null;
  if (JSON.stringify(value).length > metadataFilterLimits.bytes) {
    throw invalidRequest(field, "max_size", `must serialise to at most ${metadataFilterLimits.bytes} bytes`);
  }
  const arrays: MetadataFilter["arrays"] = [];
  let keyPaths = 0;
  // Iterative, so nesting depth cannot exhaust the stack; every node is visited once.
  const stack: Array<{ path: string[]; value: JsonObject }> = [{ path: [], value }];
  while (stack.length > 0) {
    const { path, value: object } = stack.pop()!;
    for (const [key, child] of Object.entries(object)) {
      const at = [...path, key];
      if (isObject(child) && Object.keys(child).length > 0) {
        stack.push({ path: at, value: child });
        continue;
      }
      if (++keyPaths > metadataFilterLimits.keyPaths) {
        throw invalidRequest(field, "max_items", `must name at most ${metadataFilterLimits.keyPaths} key paths`);
      }
      if (Array.isArray(child)) arrays.push({ path: at, value: child });
    }
  }
  return { contains: value, arrays };
}

/** The filter as the receipt reports it. */
export const metadataFilterJson = (filter: MetadataFilter | null): JsonObject => filter?.contains ?? {};
