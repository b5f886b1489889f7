import type { Sql } from "../db/database.js";

// Reports, appeals and the record of moderation actions. Lists page by id (ids sort by creation time).

export interface ReportRecord {
  id: string;
  skillId: string;
  reporterWorkspace: string;
  reason: string;
  message: string | null;
  status: "open" | "actioned" | "dismissed";
  createdAt: Date;
  resolvedAt: Date | null;
  resolvedBy: string | null;
  resolutionNote: string | null;
}

interface ReportRow {
  id: string;
  skill_id: string;
  reporter_workspace: string;
  reason: string;
  message: string | null;
  status: ReportRecord["status"];
  created_at: Date;
  resolved_at: Date | null;
  resolved_by: string | null;
  resolution_note: string | null;
}

const reportOf = (r: ReportRow): ReportRecord => ({
  id: r.id,
  skillId: r.skill_id,
  reporterWorkspace: r.reporter_workspace,
  reason: r.reason,
  message: r.message,
  status: r.status,
  createdAt: r.created_at,
  resolvedAt: r.resolved_at,
  resolvedBy: r.resolved_by,
  resolutionNote: r.resolution_note,
});

const reportSelect = `select r.id, r.skill_id, w.name as reporter_workspace, r.reason, r.message, r.status, r.created_at, r.resolved_at,
    r.resolved_by, r.resolution_note
  from marketplace_reports r join workspaces w on w.id = r.reporter_workspace_id`;

/**
 * Files a report, or finds the reporter's open report of the skill (one open report per workspace and
 * skill, by a partial unique index, so concurrent repeats also answer one report).
 */
export async function fileReport(
  sql: Sql,
  r: { id: string; skillId: string; workspaceId: string; keyId: string; reason: string; message: string | null; at: Date },
): Promise<{ report: ReportRecord; created: boolean }> {
  const inserted = await sql.query<{ id: string }>(
    `insert into marketplace_reports (id, skill_id, reporter_workspace_id, reporter_key_id, reason, message, status, created_at)
     values ($1, $2, $3, $4, $5, $6, 'open', $7)
     on conflict (skill_id, reporter_workspace_id) where status = 'open' do nothing returning id`,
    [r.id, r.skillId, r.workspaceId, r.keyId, r.reason, r.message, r.at],
  );
  const [row] = await sql.query<ReportRow>(`${reportSelect} where r.skill_id = $1 and r.reporter_workspace_id = $2 and r.status = 'open'`, [
    r.skillId,
    r.workspaceId,
  ]);
  return { report: reportOf(row!), created: inserted.length > 0 };
}

export async function listReports(sql: Sql, f: { status: string | null; skillId: string | null; after: string | null; limit: number }): Promise<ReportRecord[]> {
  const rows = await sql.query<ReportRow>(
    `${reportSelect} where ($1::text is null or r.status = $1) and ($2::text is null or r.skill_id = $2) and ($3::text is null or r.id > $3)
     order by r.id limit $4`,
    [f.status, f.skillId, f.after, f.limit],
  );
  return rows.map(reportOf);
}

/** Resolves the skill's open reports as actioned; returns how many. */
export async function actionOpenReports(sql: Sql, skillId: string, by: string, note: string | null, at: Date): Promise<number> {
  const rows = await sql.query(
    `update marketplace_reports set status = 'actioned', resolved_at = $2, resolved_by = $3, resolution_note = $4
     where skill_id = $1 and status = 'open' returning id`,
    [skillId, at, by, note],
  );
  return rows.length;
}

/** Dismisses an open report; undefined when there is no such report, the report as it is when not open. */
export async function dismissReport(sql: Sql, id: string, by: string, note: string | null, at: Date): Promise<{ report: ReportRecord; changed: boolean } | undefined> {
  const changed = await sql.query(
    `update marketplace_reports set status = 'dismissed', resolved_at = $2, resolved_by = $3, resolution_note = $4
     where id = $1 and status = 'open' returning id`,
    [id, at, by, note],
  );
  const [row] = await sql.query<ReportRow>(`${reportSelect} where r.id = $1`, [id]);
  return row && { report: reportOf(row), changed: changed.length > 0 };
}

export interface AppealRecord {
  id: string;
  skillId: string;
  workspaceId: string;
  workspace: string;
  message: string;
  status: "pending" | "granted" | "denied";
  createdAt: Date;
  decidedAt: Date | null;
  decidedBy: string | null;
  decisionNote: string | null;
}

interface AppealRow {
  id: string;
  skill_id: string;
  workspace_id: string;
  workspace: string;
  message: string;
  status: AppealRecord["status"];
  created_at: Date;
  decided_at: Date | null;
  decided_by: string | null;
  decision_note: string | null;
}

const appealOf = (r: AppealRow): AppealRecord => ({
  id: r.id,
  skillId: r.skill_id,
  workspaceId: r.workspace_id,
  workspace: r.workspace,
  message: r.message,
  status: r.status,
  createdAt: r.created_at,
  decidedAt: r.decided_at,
  decidedBy: r.decided_by,
  decisionNote: r.decision_note,
});

const appealSelect = `select a.id, a.skill_id, a.workspace_id, w.name as workspace, a.message, a.status, a.created_at, a.decided_at,
    a.decided_by, a.decision_note
  from marketplace_appeals a join workspaces w on w.id = a.workspace_id`;

/** Holds the owner's row until the transaction ends, so one owner's appeals are checked and filed one at a time. */
export async function lockOwner(sql: Sql, workspaceId: string): Promise<void> {
  await sql.query("select id from workspaces where id = $1 for update", [workspaceId]);
}

export async function pendingAppealOf(sql: Sql, workspaceId: string): Promise<AppealRecord | undefined> {
  const [row] = await sql.query<AppealRow>(`${appealSelect} where a.workspace_id = $1 and a.status = 'pending'`, [workspaceId]);
  return row && appealOf(row);
}

/** Creation times of the owner's appeals since `since`. */
export async function appealTimesSince(sql: Sql, workspaceId: string, since: Date): Promise<Date[]> {
  const rows = await sql.query<{ created_at: Date }>("select created_at from marketplace_appeals where workspace_id = $1 and created_at > $2", [
    workspaceId,
    since,
  ]);
  return rows.map((r) => r.created_at);
}

export async function insertAppeal(sql: Sql, a: { id: string; skillId: string; workspaceId: string; keyId: string; message: string; at: Date }): Promise<AppealRecord> {
  await sql.query(
    `insert into marketplace_appeals (id, skill_id, workspace_id, key_id, message, status, created_at)
     values ($1, $2, $3, $4, $5, 'pending', $6)`,
    [a.id, a.skillId, a.workspaceId, a.keyId, a.message, a.at],
  );
  return (await findAppeal(sql, a.id))!;
}

export async function findAppeal(sql: Sql, id: string, opts: { forUpdate?: boolean } = {}): Promise<AppealRecord | undefined> {
  const [row] = await sql.query<AppealRow>(`${appealSelect} where a.id = $1${opts.forUpdate ? " for update of a" : ""}`, [id]);
  return row && appealOf(row);
}

export async function decideAppeal(sql: Sql, id: string, status: "granted" | "denied", by: string, note: string | null, at: Date): Promise<AppealRecord> {
  await sql.query("update marketplace_appeals set status = $2, decided_at = $3, decided_by = $4, decision_note = $5 where id = $1", [
    id,
    status,
    at,
    by,
    note,
  ]);
  return (await findAppeal(sql, id))!;
}

export async function listAppeals(sql: Sql, f: { status: string | null; after: string | null; limit: number }): Promise<AppealRecord[]> {
  const rows = await sql.query<AppealRow>(
    `${appealSelect} where ($1::text is null or a.status = $1) and ($2::text is null or a.id > $2) order by a.id limit $3`,
    [f.status, f.after, f.limit],
  );
  return rows.map(appealOf);
}

export interface ActionRecord {
  id: string;
  action: "takedown" | "dismiss" | "grant" | "deny" | "clear" | "yank";
  skillId: string;
  /** Clear and yank: the published version. */
  version?: number | null;
  reportId: string | null;
  appealId: string | null;
  reason: string | null;
  note: string | null;
  actor: string;
  createdAt: Date;
}

export async function recordAction(sql: Sql, a: ActionRecord): Promise<ActionRecord> {
  await sql.query(
    `insert into moderation_actions (id, action, skill_id, report_id, appeal_id, reason, note, actor, created_at, version)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [a.id, a.action, a.skillId, a.reportId, a.appealId, a.reason, a.note, a.actor, a.createdAt, a.version ?? null],
  );
  return a;
}

export async function listActions(sql: Sql, f: { skillId: string | null; before: string | null; limit: number }): Promise<ActionRecord[]> {
  const rows = await sql.query<{
    id: string;
    action: ActionRecord["action"];
    skill_id: string;
    report_id: string | null;
    appeal_id: string | null;
    reason: string | null;
    note: string | null;
    actor: string;
    created_at: Date;
    version: number | null;
  }>(
    `select id, action, skill_id, report_id, appeal_id, reason, note, actor, created_at, version from moderation_actions
     where ($1::text is null or skill_id = $1) and ($2::text is null or id < $2) order by id desc limit $3`,
    [f.skillId, f.before, f.limit],
  );
  return rows.map((r) => ({
    id: r.id,
    action: r.action,
    skillId: r.skill_id,
    reportId: r.report_id,
    appealId: r.appeal_id,
    reason: r.reason,
    note: r.note,
    actor: r.actor,
    createdAt: r.created_at,
    version: r.version,
  }));
}

export interface ModerationStats {
  reports: Array<{ reason: string; open: number; actioned: number; dismissed: number }>;
  takedowns: number;
  appeals: { pending: number; granted: number; denied: number };
  medianReportDecisionSeconds: number | null;
  medianAppealDecisionSeconds: number | null;
}

export async function moderationStats(sql: Sql): Promise<ModerationStats> {
  const reports = await sql.query<{ reason: string; open: number; actioned: number; dismissed: number }>(
    `select reason, count(*) filter (where status = 'open')::int as open, count(*) filter (where status = 'actioned')::int as actioned,
       count(*) filter (where status = 'dismissed')::int as dismissed
     from marketplace_reports group by reason order by reason`,
  );
  const [counts] = await sql.query<{ takedowns: number; pending: number; granted: number; denied: number; report_median: number | null; appeal_median: number | null }>(
    `select (select count(*) from moderation_actions where action = 'takedown')::int as takedowns,
       (select count(*) from marketplace_appeals where status = 'pending')::int as pending,
       (select count(*) from marketplace_appeals where status = 'granted')::int as granted,
       (select count(*) from marketplace_appeals where status = 'denied')::int as denied,
       (select percentile_cont(0.5) within group (order by extract(epoch from resolved_at - created_at)::float8)
          from marketplace_reports where resolved_at is not null)::float8 as report_median,
       (select percentile_cont(0.5) within group (order by extract(epoch from decided_at - created_at)::float8)
          from marketplace_appeals where decided_at is not null)::float8 as appeal_median`,
  );
  return {
    reports,
    takedowns: counts!.takedowns,
    appeals: { pending: counts!.pending, granted: counts!.granted, denied: counts!.denied },
    medianReportDecisionSeconds: counts!.report_median === null ? null : Number(counts!.report_median),
    medianAppealDecisionSeconds: counts!.appeal_median === null ? null : Number(counts!.appeal_median),
  };
}
