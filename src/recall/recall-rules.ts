import { z } from "zod";
import type { RecallRequest } from "../../gen/agent/v1/recall_pb.js";
import { SearchMode as SearchModeEnum } from "../../gen/agent/v1/recall_pb.js";
import { memoryTypes, severities, severityOrder } from "../memories/memory-rules.js";
import { parseMetadataFilter, type MetadataFilter } from "../memories/metadata-filter.js";
import { checkCreatedWindow, containerName, isoInstant, parseOrThrow } from "../validation.js";
import type { SearchMode } from "./scoring.js";

export const recallLimits = { defaultLimit: 10, maxLimit: 100, queryChars: 4096, maxThreshold: 1.5 } as const;

const modes: Record<number, SearchMode> = {
  [SearchModeEnum.UNSPECIFIED]: "hybrid",
  [SearchModeEnum.SEMANTIC]: "semantic",
  [SearchModeEnum.KEYWORD]: "keyword",
  [SearchModeEnum.HYBRID]: "hybrid",
};

const recallRules = z.object({
  query: z
    .string()
    .max(recallLimits.queryChars, `must be at most ${recallLimits.queryChars} characters`)
    .refine((q) => q.trim().length > 0, { message: "is required", params: { rule: "required" } }),
  containers: z.array(containerName).max(64, "must have at most 64 items"),
  types: z.array(z.number().refine((n) => memoryTypes.byNumber.has(n), `must be one of ${memoryTypes.list}`)),
  limit: z
    .number()
    .int()
    .min(1, `must be between 1 and ${recallLimits.maxLimit}`)
    .max(recallLimits.maxLimit, `must be between 1 and ${recallLimits.maxLimit}`)
    .optional(),
  searchMode: z.number().refine((n) => n in modes, "must be one of semantic, keyword, hybrid"),
  minConfidence: z.number().min(0, "must be between 0 and 1").max(1, "must be between 0 and 1").optional(),
  includeReceipt: z.boolean().optional(),
  includeExpired: z.boolean(),
  includeShadowed: z.boolean(),
  createdAfter: isoInstant.optional(),
  createdBefore: isoInstant.optional(),
  validAt: isoInstant.optional(),
  threshold: z
    .number()
    .min(0, `must be between 0 and ${recallLimits.maxThreshold}`)
    .max(recallLimits.maxThreshold, `must be between 0 and ${recallLimits.maxThreshold}`)
    .optional(),
  tags: z.array(z.string().min(1, "must not be empty").max(64, "must be at most 64 characters")).max(32, "must have at most 32 items"),
  severity: z.number().refine((n) => n === 0 || severities.byNumber.has(n), `must be one of ${severities.list}`),
  maxTokens: z.number().int().min(1, "must be at least 1").optional(),
});

/** A validated recall request. */
export interface RecallQuery {
  query: string;
  /** Requested containers; empty means every container the key can see. */
  containers: string[];
  types: string[];
  tags: string[];
  /** The requested minimum severity and the severities it admits; null when not filtering. */
  severity: { min: string; admitted: string[] } | null;
  limit: number;
  mode: SearchMode;
  minConfidence: number;
  includeReceipt: boolean;
  includeExpired: boolean;
  /** Keep memories shadowed by a newer one. */
  includeShadowed: boolean;
  createdAfter: Date | null;
  createdBefore: Date | null;
  validAt: Date;
  threshold: number;
  maxTokens: number | null;
  /** Only memories whose metadata contains this; null when not filtering. */
  metadata: MetadataFilter | null;
}

export function parseRecallRequest(req: RecallRequest, receiptsEnabled: boolean, now: Date): RecallQuery {
  const r = parseOrThrow(recallRules, req);
  checkCreatedWindow(r);
  const minSeverity = r.severity === 0 ? null : severities.byNumber.get(r.severity)!;
  return {
    query: r.query.trim(),
    containers: [...new Set(r.containers)],
    types: r.types.map((n) => memoryTypes.byNumber.get(n)!),
    tags: r.tags,
    severity:
      minSeverity === null
        ? null
        : { min: minSeverity, admitted: severityOrder.slice(severityOrder.indexOf(minSeverity as never)) },
    limit: r.limit ?? recallLimits.defaultLimit,
    mode: modes[r.searchMode]!,
    minConfidence: r.minConfidence ?? 0,
    includeReceipt: receiptsEnabled && (r.includeReceipt ?? true),
    includeExpired: r.includeExpired,
    includeShadowed: r.includeShadowed,
    createdAfter: r.createdAfter ?? null,
    createdBefore: r.createdBefore ?? null,
    validAt: r.validAt ?? now,
    threshold: r.threshold ?? 0,
    maxTokens: r.maxTokens ?? null,
    metadata: parseMetadataFilter(req.metadata, "metadata"),
  };
}
