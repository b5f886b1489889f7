import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { type MemoryInput, MemorySchema, type MemoryService } from "../../gen/agent/v1/memory_pb.js";
import { assertMayWrite, scopeOf, writeContainers } from "../accounts/container-scope.js";
import { agentPrincipal } from "../accounts/principal.js";
import type { Database } from "../db/database.js";
import { invalidRequest, notFound } from "../errors/api-error.js";
import { newId } from "../ids.js";
import type { UsageMeter } from "../usage/usage-meter.js";
import { fieldPath } from "../validation.js";
import {
  fieldsToUpdate,
  memoryLimits,
  memorySources,
  memoryTypes,
  mergeFields,
  parseMemoryFields,
  setFields,
  severities,
  type MemoryFields,
} from "./memory-rules.js";
import {
  deleteMemory,
  findMemory,
  findMemoryVersion,
  insertMemories,
  listMemoryVersions,
  saveNewVersion,
  type MemoryRecord,
} from "./memory-store.js";

export function memoryMessage(m: MemoryRecord): MessageInitShape<typeof MemorySchema> {
  const source = memorySources.byName.get(m.source) ?? 0;
  return {
    id: m.id,
    content: m.content,
    type: memoryTypes.byName.get(m.type) ?? 0,
    containers: m.containers,
    tags: m.tags,
    source,
    validFrom: m.validFrom.toISOString(),
    validUntil: m.validUntil?.toISOString(),
    metadata: m.metadata,
    confidence: m.confidence,
    version: m.version,
    createdAt: m.createdAt.toISOString(),
    updatedAt: m.updatedAt.toISOString(),
    provenance: { source, keyId: m.keyId },
    severity: m.severity === null ? undefined : severities.byName.get(m.severity),
  };
}

/** A stored memory seen as writable fields, so an update can be validated exactly like a create. */
const fieldsOf = (m: MemoryRecord): MemoryFields => ({
  content: m.content,
  type: memoryTypes.byName.get(m.type)!,
  containers: m.containers,
  tags: m.tags,
  source: memorySources.byName.get(m.source)!,
  validFrom: m.validFrom.toISOString(),
  validUntil: m.validUntil?.toISOString(),
  metadata: m.metadata,
  confidence: m.confidence,
  severity: m.severity === null ? 0 : severities.byName.get(m.severity)!,
});

/** `afterWrite` runs after every committed write, e.g. to index the change soon. `usage` enforces plan caps. */
export function memoryService(db: Database, usage: UsageMeter, afterWrite: () => void): ServiceImpl<typeof MemoryService> {
  return {
    async createMemories(req, ctx) {
      const principal = agentPrincipal(ctx);
      const batch = req.memories.length > 0;
      if (batch && setFields(req).length > 0) {
        throw invalidRequest("memories", "exclusive", "send either one memory's fields or a memories array, not both");
      }
      if (req.memories.length > memoryLimits.batchSize) {
        throw invalidRequest("memories", "max_items", `must have at most ${memoryLimits.batchSize} items`);
      }
      const inputs: MemoryFields[] = batch ? req.memories : [req];
      const now = new Date();
      const records = inputs.map((input, i): MemoryRecord => {
        const prefix = batch ? `memories[${i}]` : "";
        const draft = parseMemoryFields(input, prefix, now);
        return {
          ...draft,
          id: newId("mem"),
          workspaceId: principal.workspaceId,
          containers: writeContainers(principal, draft.containers, fieldPath(["containers"], prefix)),
          state: "active",
          version: 1,
          keyId: principal.keyId,
          createdAt: now,
          updatedAt: now,
        };
      });
      await db.transaction(async (tx) => {
        await usage.reserveMemories(tx, principal, records.map((r) => r.content));
        await insertMemories(tx, records);
      });
      afterWrite();
      return { ids: records.map((r) => r.id), memories: records.map(memoryMessage), contradictions: [] };
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
      const fields = fieldsToUpdate(patch, req.updateMask?.paths ?? []);
      if (fields.length === 0) throw invalidRequest("memory", "required", "names no field to update");
      const updated = await db.transaction(async (tx) => {
        const current = await findMemory(tx, scopeOf(principal), req.id, true);
        if (!current) throw notFound("memory", req.id);
        assertMayWrite(principal, current.containers);
        const draft = parseMemoryFields(mergeFields(fieldsOf(current), patch, fields), "", current.createdAt);
        const next: MemoryRecord = {
          ...current,
          ...draft,
          containers: writeContainers(principal, draft.containers, "containers"),
          version: current.version + 1,
          keyId: principal.keyId,
          updatedAt: new Date(),
        };
        await usage.chargeUpdate(tx, principal, current.content, next.content);
        await saveNewVersion(tx, next);
        return next;
      });
      afterWrite();
      return memoryMessage(updated);
    },

    async deleteMemory(req, ctx) {
      const principal = agentPrincipal(ctx);
      const versions = await db.transaction(async (tx) => {
        const current = await findMemory(tx, scopeOf(principal), req.id, true);
        if (!current) throw notFound("memory", req.id);
        assertMayWrite(principal, current.containers);
        await deleteMemory(tx, current.id);
        await usage.memoriesDeleted(tx, principal, 1);
        return current.version;
      });
      afterWrite();
      return { id: req.id, versionsDeleted: versions };
    },

    async listMemoryVersions(req, ctx) {
      const versions = await listMemoryVersions(db, scopeOf(agentPrincipal(ctx)), req.id);
      if (versions.length === 0) throw notFound("memory", req.id);
      return { versions: versions.map(memoryMessage) };
    },
  };
}
