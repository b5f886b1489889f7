import { create, fromJson, toJson, type JsonObject, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { NullValue } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { z } from "zod";
import {
  RecallMetaSchema,
  RecallReceiptSchema,
  RecallRequestSchema,
  type RecallItemSchema,
  type RecallService,
  type RecallTraceSchema,
  TraceCandidateSchema,
} from "../../gen/agent/v1/recall_pb.js";
import { scopeOf } from "../accounts/container-scope.js";
import { agentPrincipal, type AgentPrincipal } from "../accounts/principal.js";
import { apiError, invalidRequest, notFound } from "../errors/api-error.js";
import { newId } from "../ids.js";
import { noteRecallTrace, requestLogKey } from "../observability/request-log.js";
import { memoryTypes, severities } from "../memories/memory-rules.js";
import type { UsageMeter } from "../usage/usage-meter.js";
import { findSuperseded, type Superseded } from "../memories/memory-store.js";
import { metadataFilterJson } from "../memories/metadata-filter.js";
import { filterTerms } from "../memories/metadata-terms.js";
import { snippet } from "../memories/snippet.js";
import { checkCreatedWindow, containerName, isoInstant, parseOrThrow } from "../validation.js";
import { runRecall, type RecallEngineDeps, type RecallResult, type ScoredCandidate } from "./recall-engine.js";
import { parseRecallRequest, type RecallQuery } from "./recall-rules.js";
import type { TraceRecord, TraceStore } from "./trace-store.js";
import type { VectorFilter } from "../search/vector/vector-index.js";
import { toRestJson } from "../transport/rest/rest-json.js";

export interface RecallServiceDeps extends RecallEngineDeps {
  traces: TraceStore;
  receiptsEnabled: boolean;
  usage: UsageMeter;
}

/** The containers a recall searches: the key's own, or the requested ones (null: the whole workspace). */
function searchedContainers(p: AgentPrincipal, requested: string[]): string[] | null {
  if (p.container === null) return requested.length > 0 ? requested : null;
  const outside = requested.find((c) => c !== p.container);
  if (outside !== undefined) {
    throw apiError("forbidden", `this key is scoped to container ${p.container} and cannot recall from ${outside}`, { container: outside });
  }
  return [p.container];
}

function itemOf(c: ScoredCandidate, q: RecallQuery, replaced: Superseded[]): MessageInitShape<typeof RecallItemSchema> {
  const m = c.memory;
  return {
    id: m.id,
    content: m.content,
    type: memoryTypes.byName.get(m.type) ?? 0,
    similarity: q.mode === "keyword" ? c.relevance : c.cosine,
    confidence: m.confidence,
    containers: m.containers,
    validUntil: m.validUntil?.toISOString(),
    createdAt: m.createdAt.toISOString(),
    validFrom: m.validFrom.toISOString(),
    metadata: m.metadata,
    tags: m.tags,
    severity: m.severity === null ? undefined : severities.byName.get(m.severity),
    supersedes: replaced.map((s) => ({ memoryId: s.id, snippet: snippet(s.content), supersededAt: s.supersededAt.toISOString() })),
    why: q.includeReceipt
      ? {
          cosine: c.cosine,
          bm25: c.bm25,
          relevance: c.relevance,
          informativeness: c.informativeness,
          queryCoverage: c.queryCoverage,
          recencyBoost: c.recencyBoost,
          severityMultiplier: c.severityMultiplier,
          confidenceMultiplier: c.confidenceMultiplier,
          finalScore: c.finalScore,
          matchedVia: c.matchedVia,
          keywordMatches: c.keywordMatches,
          rerankApplied: c.rerankScore !== null,
          rerankScore: c.rerankScore ?? undefined,
          validityState: c.validityState,
          inheritedFrom: c.inheritedFrom ?? undefined,
        }
      : undefined,
  };
}

function receiptOf(result: RecallResult, q: RecallQuery, containers: string[] | null) {
  return create(RecallReceiptSchema, {
    searchMode: q.mode,
    threshold: q.threshold,
    rerankApplied: result.rerankApplied,
    candidatesConsidered: result.candidates.length,
    returned: result.returned.length,
    filtered: result.filtered,
    filtersApplied: {
      containers: containers ?? [],
      types: q.types,
      severity: {
        kind: q.severity
          ? { case: "stringValue", value: q.severity.min }
          : { case: "nullValue", value: NullValue.NULL_VALUE },
      },
      minConfidence: q.minConfidence,
      tags: q.tags,
      metadata: metadataFilterJson(q.metadata),
    },
  });
}

const listRules = z.object({
  container: z.union([containerName, z.literal("")]),
  createdAfter: isoInstant.optional(),
  createdBefore: isoInstant.optional(),
  pageSize: z.number().int().min(1, "must be between 1 and 200").max(200, "must be between 1 and 200").optional(),
  pageToken: z.string(),
});

// Page tokens are opaque to callers: the (time, id) of the last trace of the page.
const encodeCursor = (t: TraceRecord) => Buffer.from(JSON.stringify([t.createdAt.toISOString(), t.id])).toString("base64url");
function decodeCursor(token: string): { createdAt: Date; id: string } {
  try {
    const [time, id] = JSON.parse(Buffer.from(token, "base64url").toString()) as [string, string];
    const createdAt = new Date(time);
    if (typeof id !== "string" || Number.isNaN(createdAt.getTime())) throw new Error("bad cursor");
    return { createdAt, id };
  } catch {
    throw invalidRequest("pageToken", "format", "is not a token returned by a previous page");
  }
}

function traceMessage(t: TraceRecord, withCandidates: boolean): MessageInitShape<typeof RecallTraceSchema> {
  return {
    traceId: t.id,
    createdAt: t.createdAt.toISOString(),
    keyId: t.keyId,
    query: t.query,
    containers: t.containers,
    // Stored as proto3 JSON; shown as the REST request, with the spec's enum names, on every transport.
    request: toRestJson(RecallRequestSchema, structuredClone(t.request)) as JsonObject,
    candidates: withCandidates ? t.candidates.map((c) => fromJson(TraceCandidateSchema, c)) : [],
    returnedIds: t.returnedIds,
    receipt: fromJson(RecallReceiptSchema, t.receipt),
    meta: fromJson(RecallMetaSchema, t.meta),
    embedMs: t.embedMs,
  };
}

export function recallService(deps: RecallServiceDeps): ServiceImpl<typeof RecallService> {
  return {
    async recall(req, ctx) {
      const started = performance.now();
      const principal = agentPrincipal(ctx);
      const now = new Date();
      const q = parseRecallRequest(req, deps.receiptsEnabled, now);
      const containers = searchedContainers(principal, q.containers);
      await deps.usage.chargeRecall(principal);
      const filter: VectorFilter = {
        workspaceId: principal.workspaceId,
        ...(containers ? { containers } : {}),
        ...(q.types.length > 0 ? { types: q.types } : {}),
        ...(q.tags.length > 0 ? { tags: q.tags } : {}),
        ...(q.severity ? { severities: q.severity.admitted } : {}),
        ...(q.createdAfter ? { createdAfter: q.createdAfter.getTime() } : {}),
        ...(q.createdBefore ? { createdBefore: q.createdBefore.getTime() } : {}),
        ...(q.metadata ? { metadataTerms: filterTerms(q.metadata) } : {}),
      };
      const result = await runRecall(deps, q, scopeOf(principal), filter);
      const receipt = receiptOf(result, q, containers);
      const meta = create(RecallMetaSchema, {
        tokens: result.tokens,
        searchMs: result.searchMs,
        totalMs: performance.now() - started,
        traceId: newId("trc"),
      });
      noteRecallTrace(ctx.values.get(requestLogKey), meta.traceId);
      const traced = deps.traces.record({
        id: meta.traceId,
        workspaceId: principal.workspaceId,
        keyId: principal.keyId,
        containers: containers ?? [],
        query: q.query,
        request: toJson(RecallRequestSchema, req) as JsonObject,
        // The proto3 JSON of TraceCandidate, written directly: building messages for hundreds of
        // candidates per recall only to serialise them again would sit on the hot path.
        candidates: result.candidates.map(
          (c): JsonValue => ({
            id: c.memory.id,
            cosine: c.cosine,
            bm25: c.bm25,
            finalScore: c.finalScore,
            matchedVia: c.matchedVia,
            outcome: c.outcome,
          }),
        ),
        returnedIds: result.returned.map((c) => c.memory.id),
        receipt: toJson(RecallReceiptSchema, receipt) as JsonObject,
        meta: toJson(RecallMetaSchema, meta) as JsonObject,
        embedMs: result.embedMs,
        createdAt: now,
      });
      // What the returned memories replaced: one query for all of them, only with receipts, while the trace is written.
      const [superseded] = await Promise.all([
        q.includeReceipt ? findSuperseded(deps.db, scopeOf(principal), result.returned.map((c) => c.memory.id)) : [],
        traced,
      ]);
      const replacedBy = new Map<string, Superseded[]>();
      for (const s of superseded) replacedBy.set(s.supersededBy, [...(replacedBy.get(s.supersededBy) ?? []), s]);
      return {
        memories: result.returned.map((c) => itemOf(c, q, replacedBy.get(c.memory.id) ?? [])),
        receipt: q.includeReceipt ? receipt : undefined,
        meta,
      };
    },

    async getRecallTrace(req, ctx) {
      const trace = await deps.traces.get(scopeOf(agentPrincipal(ctx)), req.traceId);
      if (!trace) throw notFound("trace", req.traceId);
      return traceMessage(trace, true);
    },

    async listRecallTraces(req, ctx) {
      const principal = agentPrincipal(ctx);
      const r = parseOrThrow(listRules, req);
      checkCreatedWindow(r);
      if (r.container && principal.container !== null && r.container !== principal.container) {
        throw apiError("forbidden", `this key is scoped to container ${principal.container}`, { container: r.container });
      }
      const limit = r.pageSize ?? 50;
      const rows = await deps.traces.list(scopeOf(principal), {
        container: r.container || null,
        createdAfter: r.createdAfter ?? null,
        createdBefore: r.createdBefore ?? null,
        before: r.pageToken ? decodeCursor(r.pageToken) : null,
        limit: limit + 1,
      });
      const page = rows.slice(0, limit);
      return {
        traces: page.map((t) => traceMessage(t, false)),
        nextPageToken: rows.length > limit ? encodeCursor(page.at(-1)!) : undefined,
      };
    },
  };
}
