import type { Database } from "../db/database.js";
import { ByteLru, entryOverheadBytes, stringBytes } from "../embeddings/lru.js";
import { apiError } from "../errors/api-error.js";
import { hashSecret, secretsEqual } from "./key-secret.js";
import { findActiveKeyByHash } from "./key-store.js";
import type { Principal } from "./principal.js";

export interface Authenticator {
  /** Resolves the bearer token of a request to its principal, or fails with auth_failed. */
  authenticate(headers: Headers): Promise<Principal>;
  /** Drops cached verifications of a key after it was rotated, revoked or given other limits. */
  forget(keyId: string): void;
  /** Drops cached verifications of a workspace's keys after its plan changed. */
  forgetWorkspace(workspace: string): void;
}

const bootstrapAdmin: Principal = {
  keyId: "admin",
  role: "admin",
  workspaceId: null,
  workspace: null,
  container: null,
  plan: null,
  rateOverride: null,
};
interface Verified {
  principal: Principal;
  until: number;
}

// A principal's strings and its rate overrides (any JSON an admin gave the key) measured as JSON text.
const verifiedBytes = (hash: string, v: Verified) => entryOverheadBytes * 2 + stringBytes(hash) + stringBytes(JSON.stringify(v.principal));
const refusedBytes = (hash: string) => entryOverheadBytes + stringBytes(hash) + 8;

/** The share of AUTH_CACHE_BYTES that remembers refused secrets, apart from the verified keys. */
const refusedShare = 1 / 4;

const refusal = () => apiError("auth_failed", "the API key is invalid, revoked or expired");

export function createAuthenticator(db: Database, adminSecret: string | undefined, cacheTtlMs: number, cacheBytes: number): Authenticator {
  const adminHash = adminSecret ? hashSecret(adminSecret) : null;
  // Verified keys by secret hash; bounded, and short-lived so revocation on another node applies quickly.
  const cache = new ByteLru<string, Verified>(cacheBytes, verifiedBytes);
  // Refused secrets, with when to look them up again. A request is authenticated by each layer it passes
  // (rate limits, route, RPC guard), and a secret no key has can never gain one (secrets are random and
  // new on create and rotate), so a bad key costs one lookup, not one per layer and request. Kept apart so
  // a flood of made-up keys evicts only its own kind.
  const refused = new ByteLru<string, number>(Math.floor(cacheBytes * refusedShare), refusedBytes);

  return {
    async authenticate(headers) {
      const header = headers.get("authorization");
      const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      if (!match) throw apiError("auth_failed", "missing or malformed Authorization: Bearer <API key> header");
      const hash = hashSecret(match[1]!);
      if (adminHash && secretsEqual(hash, adminHash)) return bootstrapAdmin;

      const cacheKey = hash.toString("base64");
      const now = Date.now();
      const cached = cache.get(cacheKey);
      if (cached && cached.until > now) return cached.principal;
      if ((refused.get(cacheKey) ?? 0) > now) throw refusal();

      const row = await findActiveKeyByHash(db, hash);
      if (!row) {
        cache.delete(cacheKey);
        refused.set(cacheKey, now + cacheTtlMs);
        throw refusal();
      }
      const principal: Principal = {
        keyId: row.id,
        role: row.role,
        workspaceId: row.workspace_id,
        workspace: row.workspace,
        container: row.container,
        plan: row.plan,
        rateOverride: row.rate_limits,
      };
      const until = Math.min(now + cacheTtlMs, row.expires_at?.getTime() ?? Infinity);
      cache.set(cacheKey, { principal, until });
      return principal;
    },
    forget(keyId) {
      cache.deleteWhere((v) => v.principal.keyId === keyId);
    },
    forgetWorkspace(workspace) {
      cache.deleteWhere((v) => v.principal.workspace === workspace);
    },
  };
}
