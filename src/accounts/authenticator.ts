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

/**
 * RFC 6750's header form and nothing else: the scheme (any case), exactly one space, then the key in
 * b64token characters (keys are `amk_` + base64url; the admin key is checked to be of them at start).
 * A tab, two spaces, a non-breaking space, a second credential or anything after the key is refused.
 * Surrounding spaces are not part of a header's value (HTTP strips them), so they do not count.
 */
export const bearerPattern = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

/** The key of an Authorization header value, or null unless it is exactly `Bearer <key>`. */
export function bearerKey(header: string | null): string | null {
  return header === null ? null : (bearerPattern.exec(header)?.[1] ?? null);
}

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
      // Two Authorization fields arrive joined with ", " (see repeatedAuthorization), which no key matches.
      const key = bearerKey(headers.get("authorization"));
      if (key === null) throw apiError("auth_failed", "missing or malformed Authorization: Bearer <API key> header");
      const hash = hashSecret(key);
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
