import type { ServiceImpl } from "@connectrpc/connect";
import { AppealStatus, ReportStatus } from "../../gen/agent/v1/marketplace_pb.js";
import { EmailStatus, type ModerationService } from "../../gen/agent/v1/moderation_pb.js";
import { principalKey } from "../accounts/principal.js";
import type { Database, Sql } from "../db/database.js";
import { apiError, invalidRequest, notFound } from "../errors/api-error.js";
import { newId } from "../ids.js";
import { loadSkills, type SkillRecord } from "../skills/skill-store.js";
import { findProfile } from "./author-profiles.js";
import { enqueueEmail, listEmails, type EmailDraft, type EmailRecord, type EmailStatus as StoredEmailStatus } from "./email-outbox.js";
import { appealDecisionEmail, takedownEmail, type NoticeSkill } from "./email-templates.js";
import { appealMessage, reportMessage, versionMessage, yankMessage } from "./marketplace-message.js";
import { yankPublishedVersion } from "./version-publishing.js";
import { clearVersion, findVersion, heldVersions } from "./version-store.js";
import { marketplaceLimits, optionalText, reasonName, reasonNumber } from "./marketplace-rules.js";
import { findListing, publishVersion, queueReindex, setListingStatus, setVisibility } from "./marketplace-store.js";
import {
  actionOpenReports,
  decideAppeal,
  dismissReport,
  findAppeal,
  listActions,
  listAppeals,
  listReports,
  moderationStats,
  recordAction,
  type ActionRecord,
} from "./moderation-store.js";

export interface ModerationServiceOptions {
  /** Runs after a committed change of what the marketplace lists; resolves once indexed (or queued). */
  afterWrite: () => Promise<void>;
  /** Wakes the email sender after an action queued an email; never waits for it. */
  emailQueued: () => void;
}

const reportStatusNames = new Map([
  [ReportStatus.OPEN, "open"],
  [ReportStatus.ACTIONED, "actioned"],
  [ReportStatus.DISMISSED, "dismissed"],
]);
const appealStatusNames = new Map([
  [AppealStatus.PENDING, "pending"],
  [AppealStatus.GRANTED, "granted"],
  [AppealStatus.DENIED, "denied"],
]);
const emailStatusNames = new Map<number, StoredEmailStatus>([
  [EmailStatus.UNSENT, "unsent"],
  [EmailStatus.SENT, "sent"],
  [EmailStatus.FAILED, "failed"],
]);
const emailStatuses = { unsent: EmailStatus.UNSENT, sent: EmailStatus.SENT, failed: EmailStatus.FAILED } as const;

/** An optional status filter (0: all). */
function statusFilter<T extends string>(value: number, names: Map<number, T>): T | null {
  if (value === 0) return null;
  const name = names.get(value);
  if (name === undefined) throw invalidRequest("status", "enum", `must be one of ${[...names.values()].join(", ")}`);
  return name;
}

function pageSizeOf(size: number | undefined): number {
  const n = size ?? marketplaceLimits.defaultPageSize;
  if (n < 1 || n > marketplaceLimits.maxPageSize) throw invalidRequest("pageSize", "range", `must be 1 to ${marketplaceLimits.maxPageSize}`);
  return n;
}

/** Page tokens are the last id of the previous page. */
const idToken = {
  encode: (id: string) => Buffer.from(id).toString("base64url"),
  decode(token: string, prefix: string): string | null {
    if (token === "") return null;
    const id = Buffer.from(token, "base64url").toString();
    if (!new RegExp(`^${prefix}_[0-9a-z]{26}$`).test(id)) throw invalidRequest("pageToken", "format", "is not a token from a previous page");
    return id;
  },
};

/** A page of `limit + 1` rows as the page and the next token. */
function paged<T extends { id: string }>(rows: T[], limit: number): { page: T[]; next: string | undefined } {
  const page = rows.slice(0, limit);
  return { page, next: rows.length > limit ? idToken.encode(page.at(-1)!.id) : undefined };
}

const iso = (d: Date | null) => d?.toISOString();

function actionMessage(a: ActionRecord) {
  return {
    id: a.id,
    action: a.action,
    skillId: a.skillId,
    reportId: a.reportId ?? undefined,
    appealId: a.appealId ?? undefined,
    reason: a.reason === null ? undefined : reasonNumber(a.reason),
    note: a.note ?? undefined,
    actor: a.actor,
    createdAt: a.createdAt.toISOString(),
    version: a.version ?? undefined,
  };
}

function emailMessage(e: EmailRecord) {
  return {
    id: e.id,
    to: e.to,
    subject: e.subject,
    body: e.body,
    kind: e.kind,
    skillId: e.skillId,
    status: emailStatuses[e.status],
    attempts: e.attempts,
    lastError: e.lastError ?? undefined,
    createdAt: e.createdAt.toISOString(),
    sentAt: iso(e.sentAt),
    nextAttemptAt: e.status === "unsent" ? e.nextAttemptAt.toISOString() : undefined,
  };
}

export function moderationService(db: Database, opts: ModerationServiceOptions): ServiceImpl<typeof ModerationService> {
  /** Queues the author's notice in the action's transaction, when the author has an email. */
  const notifyAuthor = async (tx: Sql, skill: SkillRecord, draft: (to: string, s: NoticeSkill) => EmailDraft, at: Date) => {
    const profile = await findProfile(tx, skill.workspaceId);
    if (!profile?.email) return undefined;
    return enqueueEmail(tx, draft(profile.email, { id: skill.id, slug: skill.slug, name: skill.name, authorHandle: profile.handle }), at);
  };

  const afterAction = async (emailId: string | undefined) => {
    if (emailId !== undefined) opts.emailQueued();
    await opts.afterWrite();
  };

  const decide = async (id: string, note: string | undefined, actor: string, granted: boolean) => {
    const decisionNote = optionalText(note, "note");
    const result = await db.transaction(async (tx) => {
      const appeal = await findAppeal(tx, id, { forUpdate: true });
      if (!appeal) throw notFound("appeal", id);
      if (appeal.status !== "pending") {
        throw apiError("APPEAL_CONFLICT", `appeal ${id} was already ${appeal.status}`, { id, status: appeal.status });
      }
      const at = new Date();
      const [skill] = await loadSkills(tx, [appeal.skillId]);
      await findListing(tx, appeal.skillId, { forUpdate: true });
      const decided = await decideAppeal(tx, id, granted ? "granted" : "denied", actor, decisionNote, at);
      if (granted) {
        await setListingStatus(tx, appeal.skillId, "listed", at);
        await setVisibility(tx, appeal.skillId, "public");
      }
      await recordAction(tx, {
        id: newId("mod"),
        action: granted ? "grant" : "deny",
        skillId: appeal.skillId,
        reportId: null,
        appealId: id,
        reason: null,
        note: decisionNote,
        actor,
        createdAt: at,
      });
      const emailId = await notifyAuthor(tx, skill!, (to, s) => appealDecisionEmail(to, s, granted, decisionNote), at);
      return { appeal: decided, emailId };
    });
    await afterAction(result.emailId);
    return { appeal: appealMessage(result.appeal, true), emailId: result.emailId };
  };

  return {
    async listReports(req) {
      const limit = pageSizeOf(req.pageSize);
      const rows = await listReports(db, {
        status: statusFilter(req.status, reportStatusNames),
        skillId: req.skillId || null,
        after: idToken.decode(req.pageToken, "rpt"),
        limit: limit + 1,
      });
      const { page, next } = paged(rows, limit);
      return { reports: page.map((r) => reportMessage(r, true)), nextPageToken: next };
    },

    async listAppeals(req) {
      const limit = pageSizeOf(req.pageSize);
      const rows = await listAppeals(db, { status: statusFilter(req.status, appealStatusNames), after: idToken.decode(req.pageToken, "apl"), limit: limit + 1 });
      const { page, next } = paged(rows, limit);
      return { appeals: page.map((a) => appealMessage(a, true)), nextPageToken: next };
    },

    async takedownSkill(req, ctx) {
      const actor = ctx.values.get(principalKey)!.keyId;
      const reason = reasonName(req.reason);
      const details = optionalText(req.details, "details");
      const result = await db.transaction(async (tx) => {
        const [skill] = await loadSkills(tx, [req.id]);
        const listing = skill && (await findListing(tx, skill.id, { forUpdate: true }));
        if (!skill || !listing) throw notFound("marketplace skill", req.id);
        if (listing.status === "removed") throw invalidRequest("id", "state", `skill ${skill.id} is already removed`);
        const at = new Date();
        await setListingStatus(tx, skill.id, "removed", at);
        await queueReindex(tx, skill.id);
        const reportsResolved = await actionOpenReports(tx, skill.id, actor, details, at);
        const action = await recordAction(tx, {
          id: newId("mod"),
          action: "takedown",
          skillId: skill.id,
          reportId: null,
          appealId: null,
          reason,
          note: details,
          actor,
          createdAt: at,
        });
        const emailId = await notifyAuthor(tx, skill, (to, s) => takedownEmail(to, s, reason, details), at);
        return { action, reportsResolved, emailId };
      });
      await afterAction(result.emailId);
      return { action: actionMessage(result.action), reportsResolved: result.reportsResolved, emailId: result.emailId };
    },

    async listHeldVersions() {
      const held = await heldVersions(db, marketplaceLimits.maxPageSize);
      return { held: held.map((h) => ({ skillId: h.skillId, slug: h.slug, authorHandle: h.authorHandle, version: versionMessage(h) })) };
    },

    async clearSkillVersion(req, ctx) {
      const actor = ctx.values.get(principalKey)!.keyId;
      const note = optionalText(req.note, "note");
      const action = await db.transaction(async (tx) => {
        const listing = await findListing(tx, req.id, { forUpdate: true });
        const version = listing && (await findVersion(tx, req.id, req.version));
        if (!listing || !version) throw notFound(`published version ${req.version} of skill`, req.id);
        if (version.review !== "held") throw invalidRequest("version", "state", `version ${req.version} of skill ${req.id} is not held for review`);
        const at = new Date();
        await clearVersion(tx, req.id, req.version);
        await publishVersion(tx, req.id, req.version, at);
        await queueReindex(tx, req.id);
        return recordAction(tx, { id: newId("mod"), action: "clear", skillId: req.id, version: req.version, reportId: null, appealId: null, reason: null, note, actor, createdAt: at });
      });
      await opts.afterWrite();
      return { action: actionMessage(action) };
    },

    async adminYankSkillVersion(req, ctx) {
      const actor = ctx.values.get(principalKey)!.keyId;
      const result = await db.transaction(async (tx) => {
        const done = await yankPublishedVersion(tx, req.id, req.version, req.reason, actor);
        const action = await recordAction(tx, {
          id: newId("mod"),
          action: "yank",
          skillId: req.id,
          version: req.version,
          reportId: null,
          appealId: null,
          reason: null,
          note: done.yank.reason,
          actor,
          createdAt: done.yank.at,
        });
        return { action, yank: done.yank };
      });
      return { action: actionMessage(result.action), yank: yankMessage(result.yank) };
    },

    async dismissReport(req, ctx) {
      const actor = ctx.values.get(principalKey)!.keyId;
      const note = optionalText(req.note, "note");
      const report = await db.transaction(async (tx) => {
        const at = new Date();
        const result = await dismissReport(tx, req.id, actor, note, at);
        if (!result) throw notFound("report", req.id);
        if (!result.changed) throw invalidRequest("id", "state", `report ${req.id} is already ${result.report.status}`);
        await recordAction(tx, {
          id: newId("mod"),
          action: "dismiss",
          skillId: result.report.skillId,
          reportId: req.id,
          appealId: null,
          reason: null,
          note,
          actor,
          createdAt: at,
        });
        return result.report;
      });
      return { report: reportMessage(report, true) };
    },

    grantAppeal: (req, ctx) => decide(req.id, req.note, ctx.values.get(principalKey)!.keyId, true),
    denyAppeal: (req, ctx) => decide(req.id, req.note, ctx.values.get(principalKey)!.keyId, false),

    async getModerationStats() {
      const s = await moderationStats(db);
      return {
        reports: s.reports,
        takedowns: s.takedowns,
        appealsPending: s.appeals.pending,
        appealsGranted: s.appeals.granted,
        appealsDenied: s.appeals.denied,
        medianReportDecisionSeconds: s.medianReportDecisionSeconds ?? undefined,
        medianAppealDecisionSeconds: s.medianAppealDecisionSeconds ?? undefined,
      };
    },

    async listModerationActions(req) {
      const limit = pageSizeOf(req.pageSize);
      const rows = await listActions(db, { skillId: req.skillId || null, before: idToken.decode(req.pageToken, "mod"), limit: limit + 1 });
      const { page, next } = paged(rows, limit);
      return { actions: page.map(actionMessage), nextPageToken: next };
    },

    async listEmails(req) {
      const limit = pageSizeOf(req.pageSize);
      const rows = await listEmails(db, { status: statusFilter(req.status, emailStatusNames), before: idToken.decode(req.pageToken, "eml"), limit: limit + 1 });
      const { page, next } = paged(rows, limit);
      return { emails: page.map(emailMessage), nextPageToken: next };
    },
  };
}
