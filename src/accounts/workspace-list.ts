import type { Sql } from "../db/database.js";

/** A workspace with what an operator looks at: its plan, author profile and stored items. */
export interface WorkspaceRow {
  name: string;
  /** Null: the server's DEFAULT_PLAN. */
  plan: string | null;
  created_at: Date;
  handle: string | null;
  email: string | null;
  memories_stored: string | null;
  skills_stored: string | null;
}

/** Workspaces by name after `after` (keyset on the unique name), at most `limit`. */
export async function listWorkspaces(sql: Sql, after: string | null, limit: number): Promise<WorkspaceRow[]> {
  return sql.query<WorkspaceRow>(
    `select w.name, w.plan, w.created_at, p.handle, p.email, u.memories_stored, u.skills_stored
     from workspaces w
     left join author_profiles p on p.workspace_id = w.id
     left join workspace_usage u on u.workspace_id = w.id
     where $1::text is null or w.name > $1::text
     order by w.name
     limit $2`,
    [after, limit],
  );
}
