import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  ContradictionSchema,
  CreateMemoriesResponseSchema,
  CreateOutcome,
  KeptBesideMemorySchema,
  ShadowedMemorySchema,
  type Contradiction,
} from "../../gen/agent/v1/memory_pb.js";
import type { FoundContradiction, KeptBeside } from "./contradictions/finder.js";
import type { MemoryRecord, Shadowing } from "./memory-store.js";
import { memoryMessage } from "./memory-message.js";
import { snippet } from "./snippet.js";

// The response of a create: per requested memory its id, the memory, and a receipt of what became of
// it (stored or duplicate, what it shadowed and why, what it was kept beside, one summary line).

export type CreateResponse = MessageInitShape<typeof CreateMemoriesResponseSchema>;

type ShadowedEntry = MessageInitShape<typeof ShadowedMemorySchema>;
type KeptEntry = MessageInitShape<typeof KeptBesideMemorySchema>;

export interface WriteOutcome {
  records: MemoryRecord[];
  /** For each memory, the index of an earlier one of the batch it duplicates. */
  inBatch: Array<number | undefined>;
  /** The stored memory each duplicate request index resolves to. */
  duplicateOf: Map<number, MemoryRecord>;
  /** Indexes of the records detection saw (neither kind of duplicate at the time). */
  fresh: number[];
  /** The contradictions to report: the older memory was shadowed, or the key may not shadow it. */
  contradictions: FoundContradiction[];
  /** Near misses detection found for the fresh records. */
  keptBeside: KeptBeside[];
  shadowings: Map<string, Shadowing>;
  /** Ids actually shadowed (or, in a dry run, that would be). */
  shadowed: Set<string>;
  /** The memories named in `supersedes`, by id. */
  named: Map<string, MemoryRecord>;
  now: Date;
}

/** Reason of an explicit shadowing (an id named in `supersedes`). */
export const explicitReason = "named in supersedes";
const notWritableReason = "not shadowed: it also lives in a container this key cannot write";
/** Entries of each kind named in a summary line. */
const summaryItems = 3;

/** A contradiction found for the memory `memoryId`, as write responses report it. */
export function contradictionMessage(memoryId: string, f: FoundContradiction, shadowed: boolean): Contradiction {
  return create(ContradictionSchema, {
    memoryId,
    conflictsWith: f.olderId,
    snippet: snippet(f.olderContent),
    score: f.score,
    reason: f.reason,
    shadowed,
    rule: f.rule,
  });
}

export function createResponse(w: WriteOutcome): CreateResponse {
  const { records, inBatch, duplicateOf, shadowings, shadowed, now } = w;
  const newerId = (f: { newer: number }) => records[w.fresh[f.newer]!]!.id;
  const effective = (m: MemoryRecord): MemoryRecord => {
    const by = shadowed.has(m.id) ? shadowings.get(m.id)?.by : undefined;
    return by ? { ...m, state: "shadowed", supersededBy: by, supersededAt: now } : m;
  };
  // A duplicate within the batch resolves to what its first occurrence became.
  const resolve = (i: number): { memory: MemoryRecord; duplicate: boolean } => {
    const earlier = inBatch[i];
    if (earlier !== undefined) return { memory: resolve(earlier).memory, duplicate: true };
    const existing = duplicateOf.get(i);
    return existing ? { memory: existing, duplicate: true } : { memory: effective(records[i]!), duplicate: false };
  };
  const resolved = records.map((_, i) => resolve(i));
  const found = w.contradictions.map((f) => contradictionMessage(newerId(f), f, shadowed.has(f.olderId)));
  // Each memory carries the contradictions found for it, as listed in the response's `contradictions`.
  const foundFor = new Map<string, Contradiction[]>();
  for (const c of found) foundFor.set(c.memoryId, [...(foundFor.get(c.memoryId) ?? []), c]);

  const shadowedBy = (id: string): ShadowedEntry[] =>
    [...shadowings.values()]
      .filter((s) => s.by === id && shadowed.has(s.id))
      .map((s) => {
        const named = s.force ? w.named.get(s.id) : undefined;
        if (named) return { memoryId: s.id, rule: "explicit", reason: explicitReason, snippet: snippet(named.content) };
        const f = w.contradictions.find((c) => newerId(c) === id && c.olderId === s.id)!;
        return { memoryId: s.id, rule: f.rule, reason: f.reason, snippet: snippet(f.olderContent) };
      });
  // What this memory was compared with and left active: near misses, and contradictions the key may not shadow.
  const keptBy = (id: string): KeptEntry[] => [
    ...w.keptBeside
      .filter((k) => newerId(k) === id && !shadowed.has(k.olderId))
      .map((k) => ({ memoryId: k.olderId, snippet: snippet(k.olderContent), reason: k.reason })),
    ...w.contradictions
      .filter((f) => newerId(f) === id && !shadowed.has(f.olderId))
      .map((f) => ({ memoryId: f.olderId, snippet: snippet(f.olderContent), reason: `${ruleAndReason(f.rule, f.reason)} (${notWritableReason})` })),
  ];

  return {
    ids: resolved.map((r) => r.memory.id),
    memories: resolved.map((r) => ({ ...memoryMessage(r.memory), contradictions: foundFor.get(r.memory.id) ?? [] })),
    results: resolved.map((r) => {
      if (r.duplicate) {
        return { id: r.memory.id, duplicateOf: r.memory.id, supersedes: [], outcome: CreateOutcome.DUPLICATE, summary: `duplicate of ${r.memory.id}` };
      }
      const shadowedEntries = shadowedBy(r.memory.id);
      const kept = keptBy(r.memory.id);
      return {
        id: r.memory.id,
        supersedes: shadowedEntries.map((s) => s.memoryId!),
        outcome: CreateOutcome.STORED,
        shadowed: shadowedEntries,
        keptBeside: kept,
        summary: summaryOf(shadowedEntries, kept),
      };
    }),
    contradictions: found,
  };
}

/** "rule: reason", or the reason alone when it already names its rule ("different value: …" of rule value). */
export function ruleAndReason(rule: string, reason: string): string {
  const names = new RegExp(`\\b${rule.replace(/[^\w-]/g, "")}\\b`, "i");
  return rule === "" || names.test(reason) ? reason : `${rule}: ${reason}`;
}

function listed(items: string[]): string {
  const more = items.length - summaryItems;
  return items.slice(0, summaryItems).join(", ") + (more > 0 ? ` and ${more} more` : "");
}

/** One line: "stored", then what the memory shadowed and what it was kept beside. */
function summaryOf(shadowed: ShadowedEntry[], kept: KeptEntry[]): string {
  const parts = ["stored"];
  if (shadowed.length > 0) parts.push(`shadowed ${listed(shadowed.map((s) => `${s.memoryId} (${ruleAndReason(s.rule!, s.reason!)})`))}`);
  if (kept.length > 0) parts.push(`kept beside ${listed(kept.map((k) => `${k.memoryId} (${k.reason})`))}`);
  return parts.join("; ");
}
