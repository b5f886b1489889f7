import type { VectorRecord } from "../../src/search/vector/vector-index.js";

/** An active fact for a vector index, with every field a bench does not set at its plain default. */
export function factRecord(fields: Pick<VectorRecord, "id" | "content" | "workspaceId" | "containers" | "vector"> & Partial<VectorRecord>): VectorRecord {
  return { type: "fact", tags: [], severity: null, confidence: 1, state: "active", validFrom: 0, validUntil: null, createdAt: 0, metadataTerms: [], ...fields };
}
