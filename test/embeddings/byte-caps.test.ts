import v8 from "node:v8";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { createAuthenticator } from "../../src/accounts/authenticator.js";
import { insertKey, ensureWorkspace } from "../../src/accounts/key-store.js";
import { hashSecret } from "../../src/accounts/key-secret.js";
import type { Database } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrations.js";
import { openPostgres } from "../../src/db/postgres.js";
import type { Embedder } from "../../src/embeddings/embedder.js";
import { ByteLru } from "../../src/embeddings/lru.js";
import { cachedQueryEmbedder } from "../../src/embeddings/query-cache.js";
import { cachingEmbedder } from "../../src/embeddings/text-cache.js";
import { freshPostgresDatabase } from "../support/test-server.js";

// Caches are capped by bytes: these fill them with big entries and measure the heap they keep.
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

/** Heap growth (bytes) while `fill` runs and what it built is still referenced by `keep`. */
async function retainedBy<T>(fill: () => Promise<T>): Promise<{ kept: T; grewBy: number }> {
  gc();
  const before = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  const kept = await fill();
  gc();
  return { kept, grewBy: process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers - before };
}

/** A 512-d model: each text's vector is 2 KiB. */
const model: Embedder = {
  info: { provider: "use-lite", model: "fixed", dimensions: 512 },
  embed: async (texts) => texts.map(() => new Float32Array(512).fill(0.04)),
  close: async () => {},
};

// 500 distinct 16 KiB texts (the largest content) are 8 MiB of text; the caches get 1 MiB.
const capBytes = 1024 * 1024;
const bigText = (i: number) => `${i} `.padEnd(16_384, "memory text ");
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
    const { kept, grewBy } = await retainedBy(async () => {
      const cache = cachingEmbedder(model, capBytes);
      for (let i = 0; i < 500; i++) await cache.embed([bigText(i)]);
      return cache;
    });
    expect(kept).toBeDefined();
    expect(grewBy).toBeLessThan(capBytes + 0.5 * MiB);
    // The measurement sees what a cache keeps: the same texts under a cap they fit in hold them all.
    const { kept: roomy, grewBy: unbounded } = await retainedBy(async () => {
      const cache = cachingEmbedder(model, 64 * MiB);
      for (let i = 0; i < 500; i++) await cache.embed([bigText(i)]);
      return cache;
    });
    expect(roomy).toBeDefined();
    expect(unbounded).toBeGreaterThan(8 * MiB);
  });

  it("the query cache keeps at most its cap of 4,096-character queries", async () => {
    const { kept, grewBy } = await retainedBy(async () => {
      const embedQuery = cachedQueryEmbedder(model, capBytes);
      // Each query a string of its own: a slice would keep the 16 KiB text it was cut from.
      for (let i = 0; i < 2000; i++) await embedQuery(`${i} `.padEnd(4096, "query text "));
      return embedQuery;
    });
    expect(kept).toBeDefined();
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
