import type { RecalledMemory } from "./candidate-store.js";
import type { VectorFilter } from "../search/vector/vector-index.js";

const anyOf = (have: readonly string[], wanted: readonly string[] | undefined) => wanted === undefined || have.some((h) => wanted.includes(h));

/**
 * Whether a memory read from Postgres passes the filter the index applies (see VectorFilter), for
 * memories recall reaches without the index: the successors of shadowed candidates. The metadata terms
 * are left to the re-check, which applies the metadata filter itself.
 */
export function matchesFilter(m: RecalledMemory, f: VectorFilter): boolean {
  const created = m.createdAt.getTime();
  return (
    m.workspaceId === f.workspaceId &&
    anyOf(m.containers, f.containers) &&
    anyOf([m.type], f.types) &&
    anyOf(m.tags, f.tags) &&
    (f.severities === undefined || (m.severity !== null && f.severities.includes(m.severity))) &&
    (f.minConfidence === undefined || m.confidence >= f.minConfidence) &&
    anyOf([m.state], f.states) &&
    (f.createdAfter === undefined || created >= f.createdAfter) &&
    (f.createdBefore === undefined || created < f.createdBefore) &&
    (f.validAt === undefined ||
      (m.validFrom.getTime() <= f.validAt && (m.validUntil === null || m.validUntil.getTime() > f.validAt)))
  );
}
