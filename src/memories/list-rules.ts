import { z } from "zod";
import { MemoryState, type ListMemoriesRequest, type ListShadowedMemoriesRequest } from "../../gen/agent/v1/memory_pb.js";
import { invalidRequest } from "../errors/api-error.js";
import { checkCreatedWindow, containerName, isoInstant, parseOrThrow } from "../validation.js";
import { memoryLimits, memoryTypes } from "./memory-rules.js";
import { parseMetadataFilter, type MetadataFilter } from "./metadata-filter.js";

export const listLimits = { defaultPageSize: 50, maxPageSize: 200 } as const;

const listRules = z.object({
  containers: z.array(containerName).max(64, "must have at most 64 items"),
  types: z.array(z.number().refine((n) => memoryTypes.byNumber.has(n), `must be one of ${memoryTypes.list}`)),
  tags: z
    .array(z.string().min(1, "must not be empty").max(memoryLimits.tagChars, `must be at most ${memoryLimits.tagChars} characters`))
    .max(memoryLimits.tags, `must have at most ${memoryLimits.tags} items`),
  state: z.enum(MemoryState, "must be one of active, shadowed"),
  createdAfter: isoInstant.optional(),
  createdBefore: isoInstant.optional(),
  pageSize: z
    .number()
    .int()
    .min(1, `must be between 1 and ${listLimits.maxPageSize}`)
    .max(listLimits.maxPageSize, `must be between 1 and ${listLimits.maxPageSize}`)
    .optional(),
  pageToken: z.string(),
});

/** Where a page ends: the (creation time, id) of its last memory; the next page starts after it. */
export interface ListCursor {
  /** Microseconds since the epoch, as Postgres stores the time (a Date would drop the microseconds). */
  createdAtMicros: string;
  id: string;
}

/** A validated ListMemories request. */
export interface ListQuery {
  /** Requested containers (any of); empty means every container the key can see. */
  containers: string[];
  types: string[];
  tags: string[];
  state: "active" | "shadowed" | null;
  createdAfter: Date | null;
  createdBefore: Date | null;
  metadata: MetadataFilter | null;
  /** Only memories this memory shadowed. */
  supersededBy?: string;
  pageSize: number;
  after: ListCursor | null;
}

// Page tokens are opaque to callers (base64url of JSON), and checked strictly when they come back.
export const encodeListCursor = (c: ListCursor): string => Buffer.from(JSON.stringify([c.createdAtMicros, c.id])).toString("base64url");

function decodeListCursor(token: string): ListCursor {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, "base64url").toString());
    if (Array.isArray(parsed) && parsed.length === 2 && parsed.every((p) => typeof p === "string")) {
      const [createdAtMicros, id] = parsed as [string, string];
      if (/^-?\d{1,18}$/.test(createdAtMicros) && id.length > 0 && id.length <= 128) return { createdAtMicros, id };
    }
  } catch {
    // Reported below, like any other malformed token.
  }
  throw invalidRequest("pageToken", "format", "is not a token returned by a previous page");
}

export function parseListRequest(req: ListMemoriesRequest): ListQuery {
  const r = parseOrThrow(listRules, req);
  checkCreatedWindow(r);
  return {
    containers: [...new Set(r.containers)],
    types: r.types.map((n) => memoryTypes.byNumber.get(n)!),
    tags: r.tags,
    state: r.state === MemoryState.ACTIVE ? "active" : r.state === MemoryState.SHADOWED ? "shadowed" : null,
    createdAfter: r.createdAfter ?? null,
    createdBefore: r.createdBefore ?? null,
    metadata: parseMetadataFilter(req.metadata, "metadata"),
    pageSize: r.pageSize ?? listLimits.defaultPageSize,
    after: r.pageToken ? decodeListCursor(r.pageToken) : null,
  };
}

const shadowedRules = listRules.pick({ pageSize: true, pageToken: true });

/** The memories `req.id` shadowed, in any state (a shadowed memory may be edited, but stays shadowed until restored). */
export function parseShadowedRequest(req: ListShadowedMemoriesRequest): ListQuery {
  const r = parseOrThrow(shadowedRules, { pageSize: req.pageSize, pageToken: req.pageToken });
  return {
    containers: [],
    types: [],
    tags: [],
    state: null,
    createdAfter: null,
    createdBefore: null,
    metadata: null,
    supersededBy: req.id,
    pageSize: r.pageSize ?? listLimits.defaultPageSize,
    after: r.pageToken ? decodeListCursor(r.pageToken) : null,
  };
}
