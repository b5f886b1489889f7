import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  AppealStatus,
  type AppealSchema,
  type MarketplaceSkillSchema,
  type MarketplaceSkillSummarySchema,
  ReportStatus,
  type ReportSchema,
} from "../../gen/agent/v1/marketplace_pb.js";
import { ListingState, type YankSchema } from "../../gen/agent/v1/skill_pb.js";
import { VersionReview, type MarketplaceVersionSchema } from "../../gen/agent/v1/marketplace_pb.js";
import type { PublishedVersion, YankRecord } from "./version-store.js";
import { findingMessage, listingStateOf } from "../skills/skill-message.js";
import { fileMessages, maturities } from "../skills/skill-rules.js";
import { exportedSkillMd } from "../skills/skill-export.js";
import type { SkillRecord } from "../skills/skill-store.js";
import { reasonNumber } from "./marketplace-rules.js";
import type { Listing, ListedSummary } from "./marketplace-store.js";
import type { AppealRecord, ReportRecord } from "./moderation-store.js";

const iso = (d: Date | null) => d?.toISOString();

export function summaryMessage(s: ListedSummary, similarity?: number): MessageInitShape<typeof MarketplaceSkillSummarySchema> {
  return {
    id: s.id,
    slug: s.slug,
    authorHandle: s.authorHandle,
    name: s.name,
    description: s.description,
    installs: s.installs,
    forks: s.forks,
    similarity,
    version: s.version,
    tags: s.tags,
    publishedAt: s.firstPublishedAt.toISOString(),
    forkOf: s.forkOf ?? undefined,
    verified: s.verified,
    findings: s.findings,
  };
}

export const yankMessage = (y: YankRecord): MessageInitShape<typeof YankSchema> => ({ reason: y.reason, at: y.at.toISOString() });

const reviews = { published: VersionReview.PUBLISHED, held: VersionReview.HELD, cleared: VersionReview.CLEARED } as const;

export const versionMessage = (v: PublishedVersion): MessageInitShape<typeof MarketplaceVersionSchema> => ({
  version: v.version,
  digest: v.digest,
  publishedAt: v.publishedAt.toISOString(),
  review: reviews[v.review],
  findings: v.findings.map(findingMessage),
  yanked: v.yank ? yankMessage(v.yank) : undefined,
});

/** A published version as the marketplace shows it. */
export function marketplaceSkillMessage(
  s: SkillRecord,
  listing: Listing,
  author: { handle: string; verified: boolean },
  version: PublishedVersion,
  latestVersion: number,
): MessageInitShape<typeof MarketplaceSkillSchema> {
  const authorHandle = author.handle;
  return {
    id: s.id,
    slug: s.slug,
    authorHandle,
    name: s.name,
    description: s.description,
    content: s.content,
    tags: s.tags,
    version: s.version,
    license: s.license ?? undefined,
    compatibility: s.compatibility ?? undefined,
    allowedTools: s.allowedTools,
    metadata: s.metadata,
    files: fileMessages(s.files),
    maturity: maturities.byName.get(s.maturity) ?? 0,
    installs: listing.installs,
    forks: listing.forks,
    publishedAt: listing.firstPublishedAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
    forkOf: s.forkOf ?? undefined,
    lineage: s.lineage,
    listingState: listingStateOf(listing.status) ?? ListingState.UNSPECIFIED,
    deprecated: s.state === "deprecated",
    digest: version.digest,
    findings: version.findings.map(findingMessage),
    yanked: version.yank ? yankMessage(version.yank) : undefined,
    verified: author.verified,
    latestVersion,
    extraFrontmatter: s.extraFrontmatter,
    skillMd: exportedSkillMd(s),
  };
}

const reportStatuses = { open: ReportStatus.OPEN, actioned: ReportStatus.ACTIONED, dismissed: ReportStatus.DISMISSED } as const;

/** A report; moderators also see who reported and who resolved it. */
export function reportMessage(r: ReportRecord, forModerator: boolean): MessageInitShape<typeof ReportSchema> {
  return {
    id: r.id,
    skillId: r.skillId,
    reason: reasonNumber(r.reason),
    message: r.message ?? undefined,
    status: reportStatuses[r.status],
    createdAt: r.createdAt.toISOString(),
    resolvedAt: iso(r.resolvedAt),
    ...(forModerator
      ? { reporterWorkspace: r.reporterWorkspace, resolvedBy: r.resolvedBy ?? undefined, resolutionNote: r.resolutionNote ?? undefined }
      : {}),
  };
}

const appealStatuses = { pending: AppealStatus.PENDING, granted: AppealStatus.GRANTED, denied: AppealStatus.DENIED } as const;

export function appealMessage(a: AppealRecord, forModerator: boolean): MessageInitShape<typeof AppealSchema> {
  return {
    id: a.id,
    skillId: a.skillId,
    message: a.message,
    status: appealStatuses[a.status],
    createdAt: a.createdAt.toISOString(),
    decidedAt: iso(a.decidedAt),
    decisionNote: a.decisionNote ?? undefined,
    ...(forModerator ? { workspace: a.workspace, decidedBy: a.decidedBy ?? undefined } : {}),
  };
}
