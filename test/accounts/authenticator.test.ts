import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAuthenticator } from "../../src/accounts/authenticator.js";
import { displayPrefix, hashSecret, newKeySecret } from "../../src/accounts/key-secret.js";
import { ensureWorkspace, insertKey, revokeKey } from "../../src/accounts/key-store.js";
import { openDatabase, type Database } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrations.js";
import { newId } from "../../src/ids.js";
import { watchedDatabase } from "../support/watched-database.js";

const bearer = (secret: string) => new Headers({ authorization: `Bearer ${secret}` });

describe("the authenticator's caches", () => {
  let db: Database;
  let keyLookups = 0;
  let watched: Database;

  beforeAll(async () => {
    db = await openDatabase({ dataDir: "memory://", poolSize: 1 });
    await migrate(db);
    watched = watchedDatabase(db, (sql) => {
      if (/from api_keys/.test(sql)) keyLookups++;
    });
  });
  afterAll(() => db?.close());

  const newKey = async () => {
    const workspaceId = await ensureWorkspace(db, newId("ws"), "cache-ws");
    const secret = newKeySecret();
    const row = await insertKey(db, {
      id: newId("key"),
      workspaceId,
      container: null,
      role: "agent",
      name: "k",
      secretHash: hashSecret(secret),
      prefix: displayPrefix(secret),
      expiresAt: null,
    });
    return { secret, id: row.id };
  };

  const lookupsDuring = async (fn: () => Promise<unknown>) => {
    const before = keyLookups;
    await fn();
    return keyLookups - before;
  };

  const refused = (auth: ReturnType<typeof createAuthenticator>, secret: string) =>
    expect(auth.authenticate(bearer(secret))).rejects.toMatchObject({ rawMessage: "the API key is invalid, revoked or expired" });

  it("looks a refused secret up once per TTL, as each layer of a request authenticates it again", async () => {
    const auth = createAuthenticator(watched, undefined, 60_000, 1 << 20);
    const bad = newKeySecret();
    expect(await lookupsDuring(async () => {
      for (let i = 0; i < 3; i++) await refused(auth, bad);
    })).toBe(1);
    const uncached = createAuthenticator(watched, undefined, 0, 1 << 20);
    expect(await lookupsDuring(async () => {
      for (let i = 0; i < 3; i++) await refused(uncached, bad);
    })).toBe(3);
  });

  it("keeps verified keys while made-up keys flood the refused ones", async () => {
    const auth = createAuthenticator(watched, undefined, 60_000, 16 * 1024);
    const { secret } = await newKey();
    expect(await lookupsDuring(() => auth.authenticate(bearer(secret)))).toBe(1);
    const flood = Array.from({ length: 300 }, () => newKeySecret());
    expect(await lookupsDuring(async () => {
      for (const bad of flood) await refused(auth, bad);
    })).toBe(300);
    expect(await lookupsDuring(() => auth.authenticate(bearer(secret)))).toBe(0);
    // The flood's oldest refusals were evicted by its newest: only the refused share of the cap is theirs.
    expect(await lookupsDuring(() => refused(auth, flood[0]!))).toBe(1);
    expect(await lookupsDuring(() => refused(auth, flood[299]!))).toBe(0);
  });

  it("refuses a revoked key from then on", async () => {
    const auth = createAuthenticator(watched, undefined, 60_000, 1 << 20);
    const { secret, id } = await newKey();
    expect((await auth.authenticate(bearer(secret))).keyId).toBe(id);
    await revokeKey(db, id);
    auth.forget(id);
    expect(await lookupsDuring(() => refused(auth, secret))).toBe(1);
    expect(await lookupsDuring(() => refused(auth, secret))).toBe(0);
  });
});
