import type { ConnectError } from "@connectrpc/connect";
import { z } from "zod";
import { ReportReasonSchema } from "../../gen/agent/v1/marketplace_pb.js";
import { apiError, invalidRequest } from "../errors/api-error.js";
import type { LineageEntry } from "../skills/skill-store.js";
import { restEnumName } from "../transport/rest/enum-names.js";

// Pure marketplace policy: the flag, popularity, lineage, appeal limits, author handles, email retries.

export const marketplaceLimits = {
  queryChars: 4096,
  defaultLimit: 20,
  maxLimit: 50,
  /** How deep a search with a query pages: its candidates are ranked at once. */
  maxQueryResults: 200,
  messageChars: 4096,
  appealsPerDay: 5,
  defaultPageSize: 50,
  maxPageSize: 100,
} as const;

/** What every marketplace route answers while MARKETPLACE_ENABLED is false, before its request is read. */
export function marketplaceRefusal(enabled: boolean): ConnectError | undefined {
  return enabled ? undefined : apiError("MARKETPLACE_DISABLED", "the marketplace is disabled on this server (MARKETPLACE_ENABLED=false)");
}

/** Publish-public and unpublish (skill routes) answer the marketplace's refusal while it is off. */
export function assertMarketplaceEnabled(enabled: boolean): void {
  const refused = marketplaceRefusal(enabled);
  if (refused) throw refused;
}

// Popularity: every install (by a new workspace) and every fork adds 2^(t / halfLife), t measured from a
// fixed epoch. Ordering by the stored sum is ordering by the decayed score at any later instant (every
// term decays by the same factor), so no row needs rewriting as time passes. At a 30-day half-life the
// terms stay inside float8 range (below 2^1024) for 84 years after the epoch, until 2110.
export const popularityHalfLifeDays = 30;
const popularityEpochMs = Date.UTC(2026, 0, 1);
const dayMs = 86_400_000;

/** What one install or fork at `at` adds to a listing's stored popularity. */
export function popularityWeight(at: Date): number {
  return 2 ** ((at.getTime() - popularityEpochMs) / dayMs / popularityHalfLifeDays);
}

/** A stored popularity as a score at `now`: installs and forks, each halved every 30 days since it happened. */
export function popularityAt(stored: number, now: Date): number {
  return stored / popularityWeight(now);
}

/** A fork's lineage: its parent, then the parent's own lineage (which the parent can never change). */
export function lineageOf(parent: { id: string; slug: string; version: number; lineage: readonly LineageEntry[] }, parentHandle: string): LineageEntry[] {
  return [{ id: parent.id, slug: parent.slug, authorHandle: parentHandle, version: parent.version }, ...parent.lineage];
}

/**
 * Appeals by one owner in the last 24 hours (their creation times): refused with rate_limited once there
 * are `appealsPerDay`, with Retry-After the whole seconds until the oldest leaves the window.
 */
export function appealRetryAfterSeconds(recent: readonly Date[], now: Date): number | null {
  if (recent.length < marketplaceLimits.appealsPerDay) return null;
  const oldest = Math.min(...recent.map((d) => d.getTime()));
  return Math.max(1, Math.ceil((oldest + dayMs - now.getTime()) / 1000));
}

export const appealWindowMs = dayMs;

/** The default author handle: the workspace name in the Agent Skills name form ("Acme_Corp" -> "acme-corp"). */
export function defaultHandle(workspaceName: string): string {
  const handle = workspaceName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/, "");
  return handle === "" ? "author" : handle;
}

/** A handle for a workspace whose default is taken by another: the default with a suffix from its id. */
export function disambiguatedHandle(base: string, workspaceId: string): string {
  const suffix = workspaceId.slice(-6);
  return `${base.slice(0, 64 - suffix.length - 1).replace(/-+$/, "")}-${suffix}`;
}

/** Pause before the attempt after `attempts` failed ones: base, doubling, at most an hour. */
export function emailBackoffMs(attempts: number, baseMs: number): number {
  return Math.min(3_600_000, baseMs * 2 ** Math.max(0, attempts - 1));
}

/** Report reasons by number, as stored (their REST names: spam, malware, ...). */
const reasonNames = new Map(ReportReasonSchema.values.filter((v) => v.number !== 0).map((v) => [v.number, restEnumName(ReportReasonSchema, v.name)]));
const reasonNumbers = new Map([...reasonNames].map(([n, name]) => [name, n]));
export const reportReasonList = [...reasonNames.values()];

export function reasonName(reason: number, field = "reason"): string {
  const name = reasonNames.get(reason);
  if (name === undefined) throw invalidRequest(field, reason === 0 ? "required" : "enum", `must be one of ${reportReasonList.join(", ")}`);
  return name;
}

export const reasonNumber = (name: string): number => reasonNumbers.get(name) ?? 0;

/** An optional free text (report message, takedown details, decision note). */
export function optionalText(value: string | undefined, field: string): string | null {
  if (value === undefined || value.trim() === "") return null;
  if (value.length > marketplaceLimits.messageChars) throw invalidRequest(field, "max_length", `must be at most ${marketplaceLimits.messageChars} characters`);
  return value;
}

export const authorEmail = z.email("must be an email address").max(254, "must be at most 254 characters");
