import type { Sql } from "../db/database.js";
import { newId } from "../ids.js";

// Author emails wait here. An action writes its email in its own transaction (so a notice exists exactly
// when the action happened); the sender delivers it later, retrying with backoff.

export type EmailStatus = "unsent" | "sent" | "failed";

export interface EmailDraft {
  to: string;
  subject: string;
  body: string;
  /** takedown | appeal_granted | appeal_denied */
  kind: string;
  skillId: string;
}

export interface EmailRecord extends EmailDraft {
  id: string;
  status: EmailStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastError: string | null;
  createdAt: Date;
  sentAt: Date | null;
}

interface EmailRow {
  id: string;
  to_address: string;
  subject: string;
  body: string;
  kind: string;
  skill_id: string;
  status: EmailStatus;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  created_at: Date;
  sent_at: Date | null;
}

const emailOf = (r: EmailRow): EmailRecord => ({
  id: r.id,
  to: r.to_address,
  subject: r.subject,
  body: r.body,
  kind: r.kind,
  skillId: r.skill_id,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastError: r.last_error,
  createdAt: r.created_at,
  sentAt: r.sent_at,
});

const columns = "id, to_address, subject, body, kind, skill_id, status, attempts, next_attempt_at, last_error, created_at, sent_at";

export async function enqueueEmail(sql: Sql, e: EmailDraft, at: Date): Promise<string> {
  const id = newId("eml");
  await sql.query(
    `insert into email_outbox (id, to_address, subject, body, kind, skill_id, status, next_attempt_at, created_at)
     values ($1, $2, $3, $4, $5, $6, 'unsent', $7, $7)`,
    [id, e.to, e.subject, e.body, e.kind, e.skillId, at],
  );
  return id;
}

/**
 * Takes up to `limit` due emails for one attempt each: their attempt is counted and their next attempt
 * pushed `leaseMs` ahead before they are sent, so another node (skip locked) or a crash mid-send never
 * sends one twice at once; a crashed sender's emails come due again when the lease ends.
 */
export async function claimDueEmails(sql: Sql, limit: number, leaseMs: number): Promise<EmailRecord[]> {
  const rows = await sql.query<EmailRow>(
    `update email_outbox set attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $2::float8 / 1000)
     where id in (select id from email_outbox where status = 'unsent' and next_attempt_at <= now() order by next_attempt_at limit $1 for update skip locked)
     returning ${columns}`,
    [limit, leaseMs],
  );
  return rows.map(emailOf);
}

export async function markSent(sql: Sql, id: string): Promise<void> {
  await sql.query("update email_outbox set status = 'sent', sent_at = now(), last_error = null where id = $1", [id]);
}

/** A failed attempt: retried after `retryInMs`, or failed for good when null. */
export async function markAttemptFailed(sql: Sql, id: string, error: string, retryInMs: number | null): Promise<void> {
  await sql.query(
    `update email_outbox set last_error = $2,
       status = case when $3::float8 is null then 'failed' else status end,
       next_attempt_at = case when $3::float8 is null then next_attempt_at else now() + make_interval(secs => $3::float8 / 1000) end
     where id = $1`,
    [id, error.slice(0, 1000), retryInMs],
  );
}

/** Milliseconds until the next unsent email is due (0 when one is due now); null when none waits. */
export async function msUntilNextDue(sql: Sql): Promise<number | null> {
  const [row] = await sql.query<{ ms: number | null }>(
    "select greatest(0, extract(epoch from min(next_attempt_at) - now()) * 1000)::float8 as ms from email_outbox where status = 'unsent'",
  );
  return row?.ms === null || row?.ms === undefined ? null : Number(row.ms);
}

export async function listEmails(sql: Sql, f: { status: EmailStatus | null; before: string | null; limit: number }): Promise<EmailRecord[]> {
  const rows = await sql.query<EmailRow>(
    `select ${columns} from email_outbox where ($1::text is null or status = $1) and ($2::text is null or id < $2) order by id desc limit $3`,
    [f.status, f.before, f.limit],
  );
  return rows.map(emailOf);
}
