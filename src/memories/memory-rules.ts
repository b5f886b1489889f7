import type { DescEnum, JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import { MemorySourceSchema, MemoryTypeSchema, SeveritySchema, type MemoryInput } from "../../gen/agent/v1/memory_pb.js";
import { invalidRequest } from "../errors/api-error.js";
import { restEnumName, restEnumValues } from "../transport/rest/enum-names.js";
import { containerName, fieldPath, isoInstant, oneLine, parseOrThrow } from "../validation.js";

// Pure validation and defaults for memory fields. Enum values are stored by their REST names ("fact").

export const memoryLimits = {
  batchSize: 100,
  contentChars: 16_384,
  containers: 16,
  tags: 32,
  tagChars: 64,
  metadataBytes: 16_384,
} as const;

export const defaultConfidenceBySource: Readonly<Record<string, number>> = {
  direct: 1.0,
  conversation: 0.9,
  capture: 0.85,
  extraction: 0.8,
  compaction: 0.75,
};

function enumNames(desc: DescEnum) {
  const byNumber = new Map(desc.values.filter((v) => v.number !== 0).map((v) => [v.number, restEnumName(desc, v.name)]));
  const byName = new Map([...byNumber].map(([n, name]) => [name, n]));
  return { byNumber, byName, list: restEnumValues(desc).join(", ") };
}

export const memoryTypes = enumNames(MemoryTypeSchema);
export const memorySources = enumNames(MemorySourceSchema);
export const severities = enumNames(SeveritySchema);

/** Severity names in ascending order, for "at least this severity" filters. */
export const severityOrder = ["low", "medium", "high", "critical"] as const;

const memoryType = z.number().transform((n, ctx) => {
  const name = memoryTypes.byNumber.get(n);
  if (name === undefined) {
    ctx.addIssue({ code: "custom", message: `is required: one of ${memoryTypes.list}`, params: { rule: n === 0 ? "required" : "enum" } });
    return z.NEVER;
  }
  return name;
});

const memorySource = z.number().transform((n, ctx) => {
  if (n === 0) return "direct";
  const name = memorySources.byNumber.get(n);
  if (name === undefined) {
    ctx.addIssue({ code: "custom", message: `must be one of ${memorySources.list}`, params: { rule: "enum" } });
    return z.NEVER;
  }
  return name;
});

const severity = z.number().transform((n, ctx) => {
  if (n === 0) return null;
  const name = severities.byNumber.get(n);
  if (name === undefined) {
    ctx.addIssue({ code: "custom", message: `must be one of ${severities.list}`, params: { rule: "enum" } });
    return z.NEVER;
  }
  return name;
});

const metadata = z.custom<JsonObject>().refine((m) => JSON.stringify(m).length <= memoryLimits.metadataBytes, {
  message: `must serialise to at most ${memoryLimits.metadataBytes} bytes`,
  params: { rule: "max_size" },
});

const memoryRules = z
  .object({
    content: z
      .string({ error: "is required" })
      .max(memoryLimits.contentChars, `must be at most ${memoryLimits.contentChars} characters`)
      .refine((s) => s.trim().length > 0, { message: "must not be blank", params: { rule: "required" } }),
    type: memoryType,
    containers: z.array(containerName).max(memoryLimits.containers, `must have at most ${memoryLimits.containers} items`),
    tags: z
      .array(oneLine(z.string().min(1, "must not be empty").max(memoryLimits.tagChars, `must be at most ${memoryLimits.tagChars} characters`)))
      .max(memoryLimits.tags, `must have at most ${memoryLimits.tags} items`),
    source: memorySource,
    validFrom: isoInstant.optional(),
    validUntil: isoInstant.optional(),
    metadata: metadata.optional(),
    confidence: z.number().min(0, "must be between 0 and 1").max(1, "must be between 0 and 1").optional(),
    severity,
  });

/** A memory's validated fields, before it is placed in containers and stored. */
export interface MemoryDraft {
  content: string;
  type: string;
  /** As validated: empty when the caller named none (the key's container is used then). */
  containers: string[];
  tags: string[];
  source: string;
  validFrom: Date;
  validUntil: Date | null;
  metadata: JsonObject;
  confidence: number;
  /** low | medium | high | critical, or null. */
  severity: string | null;
}

export type MemoryFields = Pick<
  MemoryInput,
  "content" | "type" | "containers" | "tags" | "source" | "validFrom" | "validUntil" | "metadata" | "confidence" | "severity"
>;

/** Validates one memory's fields; errors name the field under `prefix` (e.g. "memories[3]"). */
export function parseMemoryFields(input: MemoryFields, prefix: string, defaultValidFrom: Date): MemoryDraft {
  const m = parseOrThrow(memoryRules, input, prefix);
  const validFrom = m.validFrom ?? defaultValidFrom;
  if (m.validUntil && m.validUntil <= validFrom) {
    throw invalidRequest(fieldPath(["validUntil"], prefix), "after_valid_from", "must be after validFrom");
  }
  return {
    content: m.content,
    type: m.type,
    containers: [...new Set(m.containers)],
    tags: [...new Set(m.tags)],
    source: m.source,
    validFrom,
    validUntil: m.validUntil ?? null,
    metadata: m.metadata ?? {},
    confidence: m.confidence ?? defaultConfidenceBySource[m.source]!,
    severity: m.severity,
  };
}

const patchableFields = ["content", "type", "containers", "tags", "source", "validFrom", "validUntil", "metadata", "confidence", "severity"] as const;
type PatchableField = (typeof patchableFields)[number];

/** The fields given a value: non-empty lists, non-zero enums, present optional values. */
export function setFields(fields: MemoryFields): PatchableField[] {
  return patchableFields.filter((f) => {
    const v = fields[f];
    return Array.isArray(v) ? v.length > 0 : typeof v === "number" && isEnumField(f) ? v !== 0 : v !== undefined;
  });
}

/** The fields an update applies: the mask's, or every field set in the patch when the mask is empty. */
export function fieldsToUpdate(patch: MemoryFields, maskPaths: readonly string[]): PatchableField[] {
  if (maskPaths.length === 0) return setFields(patch);
  return maskPaths.map((path) => {
    const field = patchableFields.find((f) => f === path || snakeCase(f) === path);
    if (!field) {
      throw invalidRequest("updateMask", "enum", `unknown field ${path}; one of ${patchableFields.join(", ")}`);
    }
    return field;
  });
}

const isEnumField = (f: PatchableField) => f === "type" || f === "source" || f === "severity";

const snakeCase = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The current fields with the updated ones replaced; unset updated fields clear (or fail if required). */
export function mergeFields(current: MemoryFields, patch: MemoryFields, fields: readonly PatchableField[]): MemoryFields {
  const merged: MemoryFields = { ...current };
  for (const f of fields) (merged as Record<string, unknown>)[f] = patch[f];
  return merged;
}
