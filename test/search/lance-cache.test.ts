import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { hashVector } from "../../bench/lib/hashing-embedder.js";
import { lanceCacheBytes } from "../../src/search/vector/lance-cache-meter.js";
import { openLanceIndex } from "../../src/search/vector/lancedb-index.js";
import type { LanceCacheBytes } from "../../src/search/vector/lance-session.js";
import type { VectorIndex, VectorRecord } from "../../src/search/vector/vector-index.js";

const dims = 64;
const words = ["deploy", "billing", "cache", "berlin", "coffee", "kafka", "review", "lunch", "oncall", "pricing", "vault", "tokyo"];
const text = (i: number) => `${words[i % 12]} ${words[(i * 7) % 12]} ${words[(i * 5 + 3) % 12]} note ${i}`;

const record = (i: number): VectorRecord => ({
  id: `mem_${String(i).padStart(26, "0")}`,
  content: text(i),
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
  vector: hashVector(text(i), dims),
});

const searchAll = async (index: VectorIndex, round: number) => {
  for (let q = 0; q < 40; q++) {
    await index.search(hashVector(text(q * 31 + round), dims), { workspaceId: "ws_a" }, 10);
    await index.keywordSearch(words[(q + round) % 12]!, { workspaceId: "ws_a" }, 10);
  }
};

/** Builds 3,000 rows with an IVF index, searches them by vector and keyword, and answers the bytes cached. */
async function searchedCacheBytes(cache: LanceCacheBytes): Promise<number> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-cache-"));
  const index = await openLanceIndex({ uri: dir, dimensions: dims, annThreshold: 1000, cache });
  try {
    await index.upsert(Array.from({ length: 3000 }, (_, i) => record(i)));
    await index.optimize();
    await searchAll(index, 0);
    return lanceCacheBytes();
  } finally {
    await index.close();
    await rm(dir, { recursive: true, force: true });
  }
}

// LanceDB caches index data (IVF partitions, full-text postings) and file metadata in a session of up to
// 6 GB + 1 GB unless given one; the session given to connect(uri, options, session) was silently dropped.
it("searches fill the caches the index was opened with, up to their caps, and closing empties them", async () => {
  const caps = 192 * 1024 + 192 * 1024;
  const small = await searchedCacheBytes({ index: 192 * 1024, metadata: 192 * 1024 });
  expect(small).toBeGreaterThan(0);
  expect(small).toBeLessThanOrEqual(caps);
  // Uncapped, the same searches keep more than those caps: the caps are what bound it.
  expect(await searchedCacheBytes({ index: 64 * 1024 * 1024, metadata: 64 * 1024 * 1024 })).toBeGreaterThan(caps);
  expect(lanceCacheBytes()).toBe(0);
});

it("keeps no index version an optimize replaced: what it caches is what searches read since", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-cache-"));
  const cache = { index: 64 * 1024 * 1024, metadata: 64 * 1024 * 1024 };
  const index = await openLanceIndex({ uri: dir, dimensions: dims, annThreshold: 1000, cache });
  try {
    // Rounds of writes, an optimize (a new version of every index) and searches.
    for (let round = 0; round < 5; round++) {
      await index.upsert(Array.from({ length: 1500 }, (_, i) => record(round * 1500 + i)));
      await index.optimize();
      await searchAll(index, round);
    }
    const kept = lanceCacheBytes();
    // The same searches from a connection opened now, which never saw an older version.
    const fresh = await openLanceIndex({ uri: dir, dimensions: dims, annThreshold: 1000, cache });
    try {
      await searchAll(fresh, 4);
      const live = lanceCacheBytes() - kept;
      expect(live).toBeGreaterThan(0);
      expect(kept).toBeLessThan(live * 1.5);
    } finally {
      await fresh.close();
    }
  } finally {
    await index.close();
    await rm(dir, { recursive: true, force: true });
  }
});
