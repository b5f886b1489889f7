import type { ServiceImpl } from "@connectrpc/connect";
import type { MemoryInput, MemoryService } from "../../gen/agent/v1/memory_pb.js";
import { assertMayWrite, mayWrite, scopeOf, writeContainers } from "../accounts/container-scope.js";
import { agentPrincipal } from "../accounts/principal.js";
import type { Database } from "../db/database.js";
import { apiError, invalidRequest, notFound } from "../errors/api-error.js";
import type { ContradictionFinder, FoundContradiction } from "./contradictions/finder.js";
import { createMemories } from "./create-memories.js";
import { groupedCreates } from "./create-groups.js";
import { contradictionMessage } from "./create-receipt.js";
import { encodeListCursor, parseListRequest, parseShadowedRequest } from "./list-rules.js";
import { listMemories } from "./memory-list.js";
import { fieldsOf, memoryMessage } from "./memory-message.js";
import { fieldsToUpdate, mergeFields, parseMemoryFields } from "./memory-rules.js";
import { countTokens } from "../recall/tokens.js";
import type { TokenCounter } from "../recall/token-counter.js";
import type { UsageMeter } from "../usage/usage-meter.js";
import {
  deleteMemory,
  findMemory,
  findMemoryVersion,
  listMemoryVersions,
  saveNewVersion,
  shadowMemories,
  type MemoryRecord,
} from "./memory-store.js";
import type { WriteEmbedder } from "./write-vectors.js";

export { memoryMessage } from "./memory-message.js";

export interface MemoryServiceOptions {
  /** Enforces the workspace's plan caps. */
  usage: UsageMeter;
  /** Runs after every committed write, e.g. to index the change soon. */
  afterWrite: () => void;
  /** Null turns contradiction detection off. */
  findContradictions: ContradictionFinder | null;
  /** Counts tokens of new contents (cost units, recall's token budget). */
  tokens: TokenCounter;
  /** Embeds written contents, for recall before the indexer has caught up. */
  embedWrites: WriteEmbedder;
}

export function memoryService(db: Database, opts: MemoryServiceOptions): ServiceImpl<typeof MemoryService> {
  const createGrouped = groupedCreates((req, ctx) => createMemories({ db, ...opts }, req, ctx));
  return {
    async createMemories(req, ctx) {
      const response = await createGrouped(req, ctx);
      // A dry run wrote nothing.
      if (!response.dryRun) opts.afterWrite();
      return response;
    },

    async getMemory(req, ctx) {
      const scope = scopeOf(agentPrincipal(ctx));
      const found =
        req.version === undefined
          ? await findMemory(db, scope, req.id)
          : await findMemoryVersion(db, scope, req.id, req.version);
      if (!found) throw notFound(req.version === undefined ? "memory" : `version ${req.version} of memory`, req.id);
      return memoryMessage(found);
    },

    async updateMemory(req, ctx) {
      const principal = agentPrincipal(ctx);
      const patch: MemoryInput | undefined = req.memory;
      if (!patch) throw invalidRequest("memory", "required", "is required");
      if (patch.supersedes.length > 0) throw invalidRequest("memory.supersedes", "create_only", "can only be given on create");
      const fields = fieldsToUpdate(patch, req.updateMask?.paths ?? []);
      if (fields.length === 0) throw invalidRequest("memory", "required", "names no field to update");
      const nextOf = (current: MemoryRecord): MemoryRecord => {
        const draft = parseMemoryFields(mergeFields(fieldsOf(current), patch, fields), "", current.createdAt);
        return {
          ...current,
          ...draft,
          containers: writeContainers(principal, draft.containers, "containers"),
          version: current.version + 1,
          keyId: principal.keyId,
          updatedAt: new Date(),
          // Counted below when the content is new (or was stored before counts were).
          contentTokens: draft.content === current.content ? current.contentTokens : null,
        };
      };

      // New content of an active memory is checked like a new memory, before the transaction (it embeds).
      let found: FoundContradiction[] = [];
      const before = await findMemory(db, scopeOf(principal), req.id);
      if (!before) throw notFound("memory", req.id);
      assertMayWrite(principal, before.containers);
      const planned = nextOf(before);
      const plannedTokens = planned.contentTokens ?? (await opts.tokens.count([planned.content]))[0]!;
      // Before detection, which then finds the vector in the embedder's cache.
      const [plannedVector] = await opts.embedWrites([planned.content]);
      if (opts.findContradictions && before.state === "active" && planned.content !== before.content) {
        ({ contradictions: found } = await opts.findContradictions(principal.workspaceId, [{ id: before.id, content: planned.content, containers: planned.containers }]));
      }

      const { next, shadowed } = await db.transaction(async (tx) => {
        const current = await findMemory(tx, scopeOf(principal), req.id, true);
        if (!current) throw notFound("memory", req.id);
        assertMayWrite(principal, current.containers);
        const next = nextOf(current);
        // Counted above, unless another edit changed the content meanwhile (and stored its count).
        next.contentTokens ??= next.content === planned.content ? plannedTokens : countTokens(next.content);
        await opts.usage.chargeUpdate(tx, principal, current.content, next.content, next.contentTokens);
        // A vector computed for content another edit has replaced meanwhile would mislead recall: none then.
        await saveNewVersion(tx, next, next.content === planned.content ? plannedVector! : null);
        const valid = next.content === planned.content && current.state === "active" ? found : [];
        // Detection shadows only what the key could shadow explicitly; the rest is only reported.
        const shadowings = valid.filter((f) => mayWrite(principal, f.olderContainers)).map((f) => ({ id: f.olderId, by: next.id, force: false }));
        return { next, shadowed: await shadowMemories(tx, principal.workspaceId, shadowings, next.updatedAt) };
      });
      opts.afterWrite();
      return {
        ...memoryMessage(next),
        contradictions: found
          .filter((f) => shadowed.has(f.olderId) || !mayWrite(principal, f.olderContainers))
          .map((f) => contradictionMessage(next.id, f, shadowed.has(f.olderId))),
      };
    },

    async deleteMemory(req, ctx) {
      const principal = agentPrincipal(ctx);
      const result = await db.transaction(async (tx) => {
        const current = await findMemory(tx, scopeOf(principal), req.id, true);
        if (!current) throw notFound("memory", req.id);
        assertMayWrite(principal, current.containers);
        const restored = await deleteMemory(tx, current.id);
        await opts.usage.memoriesDeleted(tx, principal, 1);
        return { versions: current.version, restored };
      });
      opts.afterWrite();
      return { id: req.id, versionsDeleted: result.versions, restored: result.restored };
    },

    async listMemories(req, ctx) {
      const principal = agentPrincipal(ctx);
      const q = parseListRequest(req);
      const outside = principal.container === null ? undefined : q.containers.find((c) => c !== principal.container);
      if (outside !== undefined) {
        throw apiError("forbidden", `this key is scoped to container ${principal.container} and cannot list ${outside}`, { container: outside });
      }
      const page = await listMemories(db, scopeOf(principal), q);
      return { memories: page.memories.map(memoryMessage), nextPageToken: page.next ? encodeListCursor(page.next) : undefined };
    },

    async listShadowedMemories(req, ctx) {
      const scope = scopeOf(agentPrincipal(ctx));
      const q = parseShadowedRequest(req);
      if (!(await findMemory(db, scope, req.id))) throw notFound("memory", req.id);
      const page = await listMemories(db, scope, q);
      return { memories: page.memories.map(memoryMessage), nextPageToken: page.next ? encodeListCursor(page.next) : undefined };
    },

    async listMemoryVersions(req, ctx) {
      const versions = await listMemoryVersions(db, scopeOf(agentPrincipal(ctx)), req.id);
      if (versions.length === 0) throw notFound("memory", req.id);
      return { versions: versions.map(memoryMessage) };
    },
  };
}
