import type { VectorRecord } from "../../src/search/vector/vector-index.js";

/** The i-th memory's index record: a fact in container "main" of workspace "ws_a", unless overridden. */
export function vectorRecord(i: number, vector: Float32Array, overrides: Partial<VectorRecord> = {}): VectorRecord {
  return {
    id: `mem_${String(i).padStart(26, "0")}`,
    content: `memory number ${i}`,
    workspaceId: "ws_a",
    containers: ["main"],
    type: "fact",
    tags: [],
    severity: null,
    confidence: 1,
    state: "active",
    validFrom: 0,
    validUntil: null,
    createdAt: i,
    metadataTerms: [],
    vector,
    ...overrides,
  };
}
