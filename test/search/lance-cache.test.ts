import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Session } from "@lancedb/lancedb";
import { expect, it } from "vitest";
import { hashVector } from "../../bench/lib/hashing-embedder.js";
import { openLanceIndex } from "../../src/search/vector/lancedb-index.js";
import { vectorRecord } from "../support/vector-records.js";

const dims = 64;
const words = ["deploy", "billing", "cache", "berlin", "coffee", "kafka", "review", "lunch", "oncall", "pricing", "vault", "tokyo"];
const text = (i: number) => `${words[i % 12]} ${words[(i * 7) % 12]} ${words[(i * 5 + 3) % 12]} note ${i}`;

const record = (i: number) => vectorRecord(i, hashVector(text(i), dims), { content: text(i) });

// LanceDB caches index data (IVF partitions, full-text postings) in a session of up to 6 GB unless given
// one; the session given to connect(uri, options, session) was silently dropped, so no cap applied.
/** Builds 3,000 rows with an IVF index, searches them by vector and keyword, and answers the session's size. */
async function searchedSessionBytes(session: Session): Promise<number> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-cache-"));
  const index = await openLanceIndex({ uri: dir, dimensions: dims, annThreshold: 1000, session });
  try {
    await index.upsert(Array.from({ length: 3000 }, (_, i) => record(i)));
    await index.optimize();
    for (let q = 0; q < 40; q++) {
      await index.search(hashVector(text(q * 31), dims), { workspaceId: "ws_a" }, 10);
      await index.keywordSearch(words[q % 12]!, { workspaceId: "ws_a" }, 10, false);
    }
    return Number(session.sizeBytes());
  } finally {
    await index.close();
    await rm(dir, { recursive: true, force: true });
  }
}

// LanceDB caches index data (IVF partitions, full-text postings) and file metadata in a session of up to
// 6 GB + 1 GB unless given one; the session given to connect(uri, options, session) was silently dropped.
it("searches fill the LanceDB session the index was opened with, up to its caps", async () => {
  const caps = 192 * 1024 + 192 * 1024;
  const small = await searchedSessionBytes(new Session(BigInt(192 * 1024), BigInt(192 * 1024)));
  expect(small).toBeGreaterThan(0);
  expect(small).toBeLessThanOrEqual(caps);
  // Uncapped, the same searches keep more than those caps: the caps are what bound it.
  expect(await searchedSessionBytes(new Session(BigInt(64 * 1024 * 1024), BigInt(64 * 1024 * 1024)))).toBeGreaterThan(caps);
});
