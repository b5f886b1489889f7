import { create, fromJson, toJson } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { type CreateMemoriesRequest, CreateMemoriesResponseSchema } from "../../gen/agent/v1/memory_pb.js";
import { assertMayWrite, mayWrite, scopeOf, writeContainers } from "../accounts/container-scope.js";
import { agentPrincipal, type AgentPrincipal } from "../accounts/principal.js";
import type { Database } from "../db/database.js";
import { apiError, invalidRequest, notFound } from "../errors/api-error.js";
import { eventLoopSlices } from "../event-loop-slices.js";
import { newId } from "../ids.js";
import type { UsageMeter } from "../usage/usage-meter.js";
import type { TokenCounter } from "../recall/token-counter.js";
import { fieldPath } from "../validation.js";
import { contentHash } from "./content-hash.js";
import type { ContradictionFinder, FoundContradiction, FoundContradictions } from "./contradictions/finder.js";
import { createResponse, type CreateResponse } from "./create-receipt.js";
import { claimKey, idempotencyKeyOf, requestHash, saveResponse, storedResponse, type Idempotency } from "./idempotency.js";
import { memoryLimits, parseMemoryFields, setFields, type MemoryFields } from "./memory-rules.js";
import {
  findDuplicates,
  findMemories,
  insertMemories,
  lockContentHashes,
  shadowMemories,
  type DuplicateProbe,
  type MemoryRecord,
  type Shadowing,
} from "./memory-store.js";
import type { WriteEmbedder } from "./write-vectors.js";

export interface CreateOptions {
  db: Database;
  usage: UsageMeter;
  findContradictions: ContradictionFinder | null;
  tokens: TokenCounter;
  embedWrites: WriteEmbedder;
}

/** Explicit supersedes must name memories the key can see (else not_found) and write (else forbidden); returns them by id. */
async function checkSupersedes(db: Database, principal: AgentPrincipal, ids: string[]): Promise<Map<string, MemoryRecord>> {
  if (ids.length === 0) return new Map();
  const found = new Map((await findMemories(db, scopeOf(principal), ids)).map((m) => [m.id, m]));
  for (const id of ids) {
    const memory = found.get(id);
    if (!memory) throw notFound("memory", id);
    assertMayWrite(principal, memory.containers);
  }
  return found;
}

/** For each memory, the index of an earlier one of the batch it duplicates. */
function batchDuplicates(probes: DuplicateProbe[]): Array<number | undefined> {
  const first = new Map<string, number>();
  return probes.map((p, i) => {
    const key = `${p.contentHash}\u0000${p.type}\u0000${p.containers.join("\u0000")}`;
    const earlier = first.get(key);
    if (earlier === undefined) first.set(key, i);
    return earlier;
  });
}

/** What the created memories shadow: what they contradict (when the key could shadow it explicitly) and what they name in supersedes. */
function planShadowing(
  principal: AgentPrincipal,
  records: MemoryRecord[],
  fresh: number[],
  created: number[],
  found: FoundContradiction[],
  supersedes: string[][],
): { contradictions: FoundContradiction[]; shadowings: Map<string, Shadowing> } {
  const createdIds = new Set(created.map((i) => records[i]!.id));
  const contradictions = found.filter((f) => createdIds.has(records[fresh[f.newer]!]!.id));
  // Detection shadows only what the key could shadow explicitly (supersedes); the rest is only reported.
  // In write order, so an older memory contradicted twice ends up replaced by the latest.
  const shadowings = new Map<string, Shadowing>();
  for (const i of created) {
    const by = records[i]!.id;
    for (const f of contradictions) {
      if (records[fresh[f.newer]!]!.id === by && mayWrite(principal, f.olderContainers)) shadowings.set(f.olderId, { id: f.olderId, by, force: false });
    }
    for (const id of supersedes[i]!) shadowings.set(id, { id, by, force: true });
  }
  return { contradictions, shadowings };
}

/**
 * Creates the memories of a request: drops duplicates, finds contradictions (before the transaction: it
 * embeds and may call the judge), then in one transaction claims the idempotency key, re-checks duplicates
 * under a lock on their content, inserts, shadows and stores the response for retries. A dry run stops
 * before the transaction and answers what it would have written.
 */
export async function createMemories(opts: CreateOptions, req: CreateMemoriesRequest, ctx: HandlerContext): Promise<CreateResponse> {
  const { db } = opts;
  const principal = agentPrincipal(ctx);
  const workspaceId = principal.workspaceId;
  const batch = req.memories.length > 0;
  if (batch && (setFields(req).length > 0 || req.supersedes.length > 0)) {
    throw invalidRequest("memories", "exclusive", "send either one memory's fields or a memories array, not both");
  }
  // Protobuf cannot tell an empty memories array from none: a request that sets nothing names both forms.
  if (!batch && setFields(req).length === 0) {
    throw invalidRequest("content", "required", `is required: send one memory's fields, or memories: an array of 1 to ${memoryLimits.batchSize}`);
  }
  if (req.memories.length > memoryLimits.batchSize) {
    throw invalidRequest("memories", "max_items", `must have at most ${memoryLimits.batchSize} items`);
  }
  const dryRun = req.dryRun === true;
  const inputs: Array<MemoryFields & { supersedes: string[] }> = batch ? req.memories : [req];
  const now = new Date();
  // A batch holds up to 1.6 MB of content: validating and hashing it takes tens of milliseconds, done in slices.
  const slices = eventLoopSlices();
  const records: MemoryRecord[] = [];
  for (const [i, input] of inputs.entries()) {
    if (slices.due) await slices.pause();
    const prefix = batch ? `memories[${i}]` : "";
    const draft = parseMemoryFields(input, prefix, now);
    records.push({
      ...draft,
      // In a dry run, a provisional id that is never stored.
      id: newId("mem"),
      workspaceId,
      containers: writeContainers(principal, draft.containers, fieldPath(["containers"], prefix)),
      state: "active",
      supersededBy: null,
      supersededAt: null,
      version: 1,
      keyId: principal.keyId,
      createdAt: now,
      updatedAt: now,
      contentTokens: null,
    });
  }
  const supersedes = inputs.map((input) => [...new Set(input.supersedes)]);

  // A dry run checks the key's format like any create, then ignores it: it neither replays nor claims it.
  const key = idempotencyKeyOf(ctx.requestHeader);
  const idem: Idempotency | null = key === null || dryRun ? null : { keyId: principal.keyId, key, requestHash: requestHash(req) };
  if (idem) {
    const stored = await storedResponse(db, idem);
    if (stored !== undefined) return fromJson(CreateMemoriesResponseSchema, stored);
  }
  const named = await checkSupersedes(db, principal, [...new Set(supersedes.flat())]);

  const probes: DuplicateProbe[] = [];
  for (const r of records) {
    if (slices.due) await slices.pause();
    probes.push({ contentHash: contentHash(r.content), type: r.type, containers: [...r.containers].sort() });
  }
  const inBatch = batchDuplicates(probes);
  const stored = await findDuplicates(db, workspaceId, probes);
  const fresh = records.map((_, i) => i).filter((i) => inBatch[i] === undefined && !stored[i]);
  const none: FoundContradictions = { contradictions: [], keptBeside: [] };
  // Embedded first, so contradiction detection finds the vectors in the embedder's cache; tokens are counted meanwhile.
  const [[embedded, found], counts] = await Promise.all([
    opts.embedWrites(fresh.map((i) => records[i]!.content)).then(
      async (vectors) => [vectors, opts.findContradictions ? await opts.findContradictions(workspaceId, fresh.map((i) => records[i]!)) : none] as const,
    ),
    opts.tokens.count(fresh.map((i) => records[i]!.content)),
  ]);
  const vectors = new Map(fresh.map((i, k) => [records[i]!.id, embedded[k]!]));
  fresh.forEach((i, k) => (records[i]!.contentTokens = counts[k]!));
  // The response once duplicates are settled: `shadow` shadows what the created memories replace (a dry
  // run's only says what it would) and answers the ids it shadowed.
  const respond = async (duplicateOf: Map<number, MemoryRecord>, created: number[], shadow: (s: Shadowing[]) => Promise<Set<string>>) => {
    const { contradictions, shadowings } = planShadowing(principal, records, fresh, created, found.contradictions, supersedes);
    const shadowed = await shadow([...shadowings.values()]);
    const kept = new Set(created);
    return createResponse({
      records,
      inBatch,
      duplicateOf,
      fresh,
      contradictions: contradictions.filter((f) => shadowed.has(f.olderId) || !mayWrite(principal, f.olderContainers)),
      keptBeside: found.keptBeside.filter((k) => kept.has(fresh[k.newer]!)),
      shadowings,
      shadowed,
      named,
      now,
    });
  };

  if (dryRun) {
    const duplicateOf = new Map<number, MemoryRecord>();
    stored.forEach((m, i) => m && duplicateOf.set(i, m));
    // Named memories are shadowed whatever their state, and detection read the contradicted ones active.
    const wouldShadow = async (shadowings: Shadowing[]) => new Set(shadowings.map((s) => s.id));
    return { ...(await respond(duplicateOf, fresh, wouldShadow)), dryRun: true };
  }

  const outcome = await db.transaction(async (tx) => {
    if (idem && !(await claimKey(tx, workspaceId, idem))) return { replay: await storedResponse(tx, idem) };
    await lockContentHashes(tx, workspaceId, fresh.map((i) => probes[i]!.contentHash));
    // Another request may have stored the same content since the check above.
    const raced = await findDuplicates(tx, workspaceId, fresh.map((i) => probes[i]!));
    const duplicateOf = new Map<number, MemoryRecord>();
    stored.forEach((m, i) => m && duplicateOf.set(i, m));
    raced.forEach((m, k) => m && duplicateOf.set(fresh[k]!, m));
    const created = fresh.filter((i) => !duplicateOf.has(i));
    // Only rows actually inserted count against the plan; a crossed cap aborts the whole batch.
    await opts.usage.reserveMemories(tx, principal, created.map((i) => records[i]!.contentTokens ?? 0));
    await insertMemories(tx, created.map((i) => records[i]!), vectors);

    const response = create(CreateMemoriesResponseSchema, await respond(duplicateOf, created, (s) => shadowMemories(tx, workspaceId, s, now)));
    if (idem) await saveResponse(tx, idem, toJson(CreateMemoriesResponseSchema, response));
    return { response };
  });
  if ("replay" in outcome) {
    if (outcome.replay === undefined) throw apiError("server_error", "idempotent request has no stored response");
    return fromJson(CreateMemoriesResponseSchema, outcome.replay);
  }
  return outcome.response;
}
