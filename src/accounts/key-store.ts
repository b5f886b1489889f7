import type { Sql } from "../db/database.js";
import type { RateOverride } from "../usage/plans.js";

export interface KeyRow {
  id: string;
  workspace_id: string | null;
  workspace: string | null;
  container: string | null;
  role: "agent" | "admin";
  name: string;
  prefix: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_rotated_at: Date | null;
  plan: string | null;
  rate_limits: RateOverride | null;
}

const keyColumns = `k.id, k.workspace_id, w.name as workspace, k.container, k.role, k.name, k.prefix,
  k.created_at, k.expires_at, k.revoked_at, k.last_rotated_at, w.plan, k.rate_limits`;

/** Creates the workspace on first use; returns its id either way. */
export async function ensureWorkspace(sql: Sql, id: string, name: string): Promise<string> {
  const [row] = await sql.query<{ id: string }>(
    `insert into workspaces (id, name) values ($1, $2)
     on conflict (name) do update set name = excluded.name returning id`,
    [id, name],
  );
  return row!.id;
}

export interface NewKey {
  id: string;
  workspaceId: string | null;
  container: string | null;
  role: "agent" | "admin";
  name: string;
  secretHash: Buffer;
  prefix: string;
  expiresAt: Date | null;
}

export async function insertKey(sql: Sql, k: NewKey): Promise<KeyRow> {
  const [row] = await sql.query<KeyRow>(
    `with k as (
       insert into api_keys (id, workspace_id, container, role, name, secret_hash, prefix, expires_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8) returning *)
     select ${keyColumns} from k left join workspaces w on w.id = k.workspace_id`,
    [k.id, k.workspaceId, k.container, k.role, k.name, k.secretHash, k.prefix, k.expiresAt],
  );
  return row!;
}

/** The live key with this secret hash, if any. */
export async function findActiveKeyByHash(sql: Sql, secretHash: Buffer): Promise<KeyRow | undefined> {
  const [row] = await sql.query<KeyRow>(
    `select ${keyColumns} from api_keys k left join workspaces w on w.id = k.workspace_id
     where k.secret_hash = $1 and k.revoked_at is null and (k.expires_at is null or k.expires_at > now())`,
    [secretHash],
  );
  return row;
}

export async function listKeys(sql: Sql, workspace: string | null, includeRevoked: boolean): Promise<KeyRow[]> {
  return sql.query<KeyRow>(
    `select ${keyColumns} from api_keys k left join workspaces w on w.id = k.workspace_id
     where ($1::text is null or w.name = $1) and ($2 or k.revoked_at is null)
     order by k.created_at desc, k.id desc`,
    [workspace, includeRevoked],
  );
}

export async function rotateKey(sql: Sql, id: string, secretHash: Buffer, prefix: string): Promise<KeyRow | undefined> {
  const [row] = await sql.query<KeyRow>(
    `with k as (
       update api_keys set secret_hash = $2, prefix = $3, last_rotated_at = now()
       where id = $1 and revoked_at is null returning *)
     select ${keyColumns} from k left join workspaces w on w.id = k.workspace_id`,
    [id, secretHash, prefix],
  );
  return row;
}

export async function revokeKey(sql: Sql, id: string): Promise<KeyRow | undefined> {
  const [row] = await sql.query<KeyRow>(
    `with k as (
       update api_keys set revoked_at = coalesce(revoked_at, now()) where id = $1 returning *)
     select ${keyColumns} from k left join workspaces w on w.id = k.workspace_id`,
    [id],
  );
  return row;
}

/** Puts a workspace on a plan, creating the workspace on first use. */
export async function setWorkspacePlan(sql: Sql, id: string, name: string, plan: string): Promise<void> {
  await sql.query(
    `insert into workspaces (id, name, plan) values ($1, $2, $3)
     on conflict (name) do update set plan = excluded.plan`,
    [id, name, plan],
  );
}

/** The key's record, revoked or not. */
export async function findKey(sql: Sql, id: string): Promise<KeyRow | undefined> {
  const [row] = await sql.query<KeyRow>(
    `select ${keyColumns} from api_keys k left join workspaces w on w.id = k.workspace_id where k.id = $1`,
    [id],
  );
  return row;
}

/** Sets or (with null) clears a key's rate-limit override. */
export async function setKeyRateLimits(sql: Sql, id: string, limits: RateOverride | null): Promise<KeyRow | undefined> {
  const [row] = await sql.query<KeyRow>(
    `with k as (update api_keys set rate_limits = $2::jsonb where id = $1 returning *)
     select ${keyColumns} from k left join workspaces w on w.id = k.workspace_id`,
    [id, limits === null ? null : JSON.stringify(limits)],
  );
  return row;
}
