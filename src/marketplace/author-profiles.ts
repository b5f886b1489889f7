import type { Sql } from "../db/database.js";
import { apiError } from "../errors/api-error.js";
import { defaultHandle, disambiguatedHandle } from "./marketplace-rules.js";

/** A workspace's marketplace identity: the handle it publishes under and where notices go. */
export interface AuthorProfile {
  workspaceId: string;
  workspace: string;
  handle: string;
  email: string | null;
  /** Marked verified by an admin. */
  verified: boolean;
}

interface ProfileRow {
  workspace_id: string;
  workspace: string;
  handle: string;
  email: string | null;
  verified: boolean;
}

const profileOf = (r: ProfileRow): AuthorProfile => ({ workspaceId: r.workspace_id, workspace: r.workspace, handle: r.handle, email: r.email, verified: r.verified });

const selectProfile = `select p.workspace_id, w.name as workspace, p.handle, p.email, p.verified
  from author_profiles p join workspaces w on w.id = p.workspace_id`;

export async function findProfile(sql: Sql, workspaceId: string): Promise<AuthorProfile | undefined> {
  const [row] = await sql.query<ProfileRow>(`${selectProfile} where p.workspace_id = $1`, [workspaceId]);
  return row && profileOf(row);
}

const insertHandle = (sql: Sql, workspaceId: string, handle: string) =>
  // No conflict target: a row for the workspace, or the handle taken by another, both insert nothing.
  sql.query("insert into author_profiles (workspace_id, handle) values ($1, $2) on conflict do nothing", [workspaceId, handle]);

/**
 * The workspace's profile, made on its first publication or fork with the default handle (its name in
 * the handle form, with a suffix from its id when another workspace holds that handle).
 */
export async function ensureProfile(sql: Sql, workspaceId: string, workspaceName: string): Promise<AuthorProfile> {
  const existing = await findProfile(sql, workspaceId);
  if (existing) return existing;
  const base = defaultHandle(workspaceName);
  await insertHandle(sql, workspaceId, base);
  let profile = await findProfile(sql, workspaceId);
  if (!profile) {
    await insertHandle(sql, workspaceId, disambiguatedHandle(base, workspaceId));
    profile = await findProfile(sql, workspaceId);
  }
  if (!profile) throw new Error(`no author handle could be given to workspace ${workspaceId}`);
  return profile;
}

const handleTaken = (handle: string) =>
  apiError("already_exists", `the author handle ${handle} belongs to another workspace`, { field: "authorHandle", authorHandle: handle });

/** Sets the given fields (an empty email clears it); the handle must be free. */
export async function setProfile(
  sql: Sql,
  workspaceId: string,
  workspaceName: string,
  change: { handle?: string; email?: string | null; verified?: boolean },
): Promise<AuthorProfile> {
  await ensureProfile(sql, workspaceId, workspaceName);
  try {
    await sql.query(
      `update author_profiles set handle = coalesce($2, handle), email = case when $3::boolean then $4 else email end,
         verified = coalesce($5, verified), updated_at = now()
       where workspace_id = $1`,
      [workspaceId, change.handle ?? null, change.email !== undefined, change.email ?? null, change.verified ?? null],
    );
  } catch (err) {
    if ((err as { code?: unknown }).code === "23505") throw handleTaken(change.handle!);
    throw err;
  }
  return (await findProfile(sql, workspaceId))!;
}
