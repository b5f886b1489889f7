import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { createAuthenticator } from "../../src/accounts/authenticator.js";
import { insertKey, ensureWorkspace } from "../../src/accounts/key-store.js";
import { hashSecret } from "../../src/accounts/key-secret.js";
import type { Database } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrations.js";
import { openPostgres } from "../../src/db/postgres.js";
import { ByteLru } from "../../src/embeddings/lru.js";
import { freshPostgresDatabase } from "../support/test-server.js";

// Caches are capped by bytes: these fill them with big entries (cache-footprint.worker.mjs: 500 texts of
// 16 KiB, the largest content, 8 MiB in all; or 2,000 queries of 4,096 characters) and measure the heap
// they keep, in a thread of their own.

/** Heap and external memory kept by one filled cache, and whether the cache was still referenced. */
async function retainedBy(cache: "write" | "query", capBytes: number): Promise<{ kept: boolean; grewBy: number }> {
  const worker = new Worker(new URL("./cache-footprint.worker.mjs", import.meta.url), { workerData: { cache, capBytes } });
  try {
    const [result] = (await Promise.race([once(worker, "message"), once(worker, "error").then(([err]) => Promise.reject(err))])) as [
      { kept: boolean; grewBy: number },
    ];
    return result;
  } finally {
    await worker.terminate();
  }
}

// The caches get 1 MiB.
const capBytes = 1024 * 1024;
const MiB = 1024 * 1024;

describe("caches capped by bytes", () => {
  it("ByteLru counts bytes, evicts the least recently used past the cap, and refuses an entry over the cap", () => {
    const lru = new ByteLru<string, string>(100, (_k, v) => v.length);
    lru.set("a", "x".repeat(40));
    lru.set("b", "x".repeat(40));
    lru.get("a"); // b is now the least recently used
    lru.set("c", "x".repeat(40));
    expect([lru.get("a") !== undefined, lru.get("b") !== undefined, lru.get("c") !== undefined]).toEqual([true, false, true]);
    expect(lru.bytes).toBe(80);
    lru.set("huge", "x".repeat(101));
    expect(lru.get("huge")).toBeUndefined();
    expect(lru.bytes).toBe(80);
    lru.set("a", "x".repeat(10)); // replacing an entry counts its new size only
    expect(lru.bytes).toBe(50);
    lru.deleteWhere((v) => v.length === 10);
    expect([lru.size, lru.bytes]).toEqual([1, 40]);
  });

  it("the write-path text cache keeps at most its cap of 16 KiB texts and their vectors", async () => {
    const { kept, grewBy } = await retainedBy("write", capBytes);
    expect(kept).toBe(true);
    expect(grewBy).toBeLessThan(capBytes + 0.5 * MiB);
    // The measurement sees what a cache keeps: the same texts under a cap they fit in hold them all.
    const { kept: roomy, grewBy: unbounded } = await retainedBy("write", 64 * MiB);
    expect(roomy).toBe(true);
    expect(unbounded).toBeGreaterThan(8 * MiB);
  });

  it("the query cache keeps at most its cap of 4,096-character queries", async () => {
    const { kept, grewBy } = await retainedBy("query", capBytes);
    expect(kept).toBe(true);
    expect(grewBy).toBeLessThan(capBytes + 0.5 * MiB);
  });

  it("the auth cache keeps the verified keys that fit its cap and looks older ones up again", async () => {
    const database = await freshPostgresDatabase();
    const db = await openPostgres(database.url, 2);
    try {
      await migrate(db);
      const workspaceId = await ensureWorkspace(db, "wsp_bytecaps", "bytecaps");
      let lookups = 0;
      const counted: Database = { ...db, query: (text, params) => (lookups++, db.query(text, params)) };
      // Room for about 20 verified keys.
      const auth = createAuthenticator(counted, undefined, 60_000, 20 * 600);
      const secrets = Array.from({ length: 100 }, (_, i) => `amk_bytecaps_${i}`);
      for (const [i, secret] of secrets.entries()) {
        await insertKey(db, { id: `key_${i}`, workspaceId, container: "c", role: "agent", name: "k", secretHash: hashSecret(secret), prefix: "amk", expiresAt: null });
      }
      const authenticate = (secret: string) => auth.authenticate(new Headers({ authorization: `Bearer ${secret}` }));
      for (const secret of secrets) await authenticate(secret);
      expect(lookups).toBe(100);
      await authenticate(secrets[99]!); // recent: still cached
      expect(lookups).toBe(100);
      await authenticate(secrets[0]!); // evicted by the byte cap: looked up again
      expect(lookups).toBe(101);
    } finally {
      await db.close();
      await database.drop();
    }
  });
});
