import { toBinary, type JsonValue } from "@bufbuild/protobuf";
import { createHash } from "node:crypto";
import { CreateMemoriesRequestSchema, type CreateMemoriesRequest } from "../../gen/agent/v1/memory_pb.js";
import type { Sql } from "../db/database.js";
import { invalidRequest } from "../errors/api-error.js";

// Idempotent creates: the first response to an (API key, Idempotency-Key) is kept for 24 hours and
// returned to every retry with the same request. The key is claimed first thing in the create's
// transaction, so a concurrent retry waits on that row and then reads the committed response.

export const idempotencyHeader = "idempotency-key";
const ttl = "interval '24 hours'";
const keyPattern = /^[\x20-\x7e]{1,255}$/;

/** The request's Idempotency-Key (header or gRPC metadata), or null; a malformed one is invalid_request. */
export function idempotencyKeyOf(headers: Headers): string | null {
  const key = headers.get(idempotencyHeader);
  if (key === null) return null;
  if (!keyPattern.test(key)) throw invalidRequest("Idempotency-Key", "format", "must be 1 to 255 printable ASCII characters");
  return key;
}

/** Identity of a request, whichever transport carried it. */
export const requestHash = (req: CreateMemoriesRequest): string =>
  createHash("sha256").update(toBinary(CreateMemoriesRequestSchema, req)).digest("hex");

export interface Idempotency {
  keyId: string;
  key: string;
  requestHash: string;
}

/** The response stored for this key, when it is live and was given to the same request; a different request is invalid_request. */
export async function storedResponse(sql: Sql, idem: Idempotency): Promise<JsonValue | undefined> {
  const [row] = await sql.query<{ request_hash: string; response: JsonValue | null }>(
    `select request_hash, response from idempotency_keys
     where key_id = $1 and idempotency_key = $2 and created_at > now() - ${ttl}`,
    [idem.keyId, idem.key],
  );
  if (!row) return undefined;
  if (row.request_hash !== idem.requestHash) {
    throw invalidRequest("Idempotency-Key", "reused", "was already used with a different request in the last 24 hours");
  }
  return row.response ?? undefined;
}

/** Claims the key inside the create's transaction (taking over an expired claim); false when a live claim exists. */
export async function claimKey(sql: Sql, workspaceId: string, idem: Idempotency): Promise<boolean> {
  const rows = await sql.query(
    `insert into idempotency_keys (key_id, idempotency_key, workspace_id, request_hash)
     values ($1, $2, $3, $4)
     on conflict (key_id, idempotency_key) do update
       set request_hash = excluded.request_hash, workspace_id = excluded.workspace_id, response = null, created_at = now()
       where idempotency_keys.created_at <= now() - ${ttl}
     returning 1`,
    [idem.keyId, idem.key, workspaceId, idem.requestHash],
  );
  return rows.length > 0;
}

export async function saveResponse(sql: Sql, idem: Idempotency, response: JsonValue): Promise<void> {
  await sql.query("update idempotency_keys set response = $3::jsonb where key_id = $1 and idempotency_key = $2", [
    idem.keyId,
    idem.key,
    JSON.stringify(response),
  ]);
}

/** Deletes expired keys; run periodically. */
export async function purgeIdempotencyKeys(sql: Sql): Promise<void> {
  await sql.query(`delete from idempotency_keys where created_at <= now() - ${ttl}`);
}
