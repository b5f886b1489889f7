import type { MessageInitShape } from "@bufbuild/protobuf";
import { MemorySchema, MemoryState } from "../../gen/agent/v1/memory_pb.js";
import { memorySources, memoryTypes, severities, type MemoryFields } from "./memory-rules.js";
import type { MemoryRecord } from "./memory-store.js";

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
    state: m.state === "shadowed" ? MemoryState.SHADOWED : MemoryState.ACTIVE,
    supersededBy: m.supersededBy ?? undefined,
    supersededAt: m.supersededAt?.toISOString(),
  };
}

/** A stored memory seen as writable fields, so an update can be validated exactly like a create. */
export const fieldsOf = (m: MemoryRecord): MemoryFields => ({
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
