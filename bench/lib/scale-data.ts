import type { MemoryRecord } from "../../src/memories/memory-store.js";
import { prng, syntheticMemory } from "./synthetic.js";

// The i-th memory of a scale benchmark, deterministic in i: content from the synthetic templates, and the
// fields filtered recall and listing select on spread with known selectivity, so a filter's cost can be
// compared with the unfiltered search:
//   type: one of six, by i (1/6 each)                 tags: 2 of 50 (about 4% carry a given tag)
//   metadata.project: one of 40 (2.5% each)           createdAt: spread evenly over the year before `now`
//   metadata.shard: one of 200 (0.5% each)            metadata.tier: one of 4 (25% each)

export const scaleTypes = ["fact", "lesson", "directive", "preference", "contact", "bookmark"] as const;
export const scaleTags = Array.from({ length: 50 }, (_, t) => `tag-${t}`);
export const scaleProjects = Array.from({ length: 40 }, (_, p) => `project-${p}`);
const yearMs = 365 * 24 * 3600 * 1000;

export function scaleMemory(i: number, ids: { id: string; workspaceId: string; keyId: string; container: string }, now: number): MemoryRecord {
  const random = prng(9_000_011 + i);
  const t1 = Math.floor(random() * scaleTags.length);
  const t2 = (t1 + 1 + Math.floor(random() * (scaleTags.length - 1))) % scaleTags.length;
  // Memory i is created at a fixed place in the year, so growing a dataset keeps older times where they were.
  const createdAt = new Date(now - yearMs + ((i * 7919) % 1_000_003) * (yearMs / 1_000_003));
  return {
    id: ids.id,
    workspaceId: ids.workspaceId,
    content: syntheticMemory(i),
    type: scaleTypes[i % scaleTypes.length]!,
    containers: [ids.container],
    tags: [scaleTags[t1]!, scaleTags[t2]!],
    source: "direct",
    validFrom: createdAt,
    validUntil: null,
    // Drawn in this order, so the fields added later left the earlier ones as they were.
    metadata: { project: scaleProjects[Math.floor(random() * scaleProjects.length)]!, n: i % 100, shard: Math.floor(random() * 200), tier: Math.floor(random() * 4) },
    confidence: 1,
    severity: null,
    state: "active",
    supersededBy: null,
    supersededAt: null,
    version: 1,
    keyId: ids.keyId,
    createdAt,
    updatedAt: createdAt,
    contentTokens: null,
  };
}
