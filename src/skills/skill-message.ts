import type { MessageInitShape } from "@bufbuild/protobuf";
import { FindingSeverity, ListingState, SkillSchema, SkillState, type ScanFindingSchema } from "../../gen/agent/v1/skill_pb.js";
import type { ScanFinding } from "./safety-scan.js";
import { fileMessages, maturities, sources, visibilities } from "./skill-rules.js";
import type { SkillRecord } from "./skill-store.js";

const listingStates = new Map([
  ["listed", ListingState.LISTED],
  ["unlisted", ListingState.UNLISTED],
  ["removed", ListingState.REMOVED],
  ["held", ListingState.HELD],
]);

/** A listing status as the API's ListingState; undefined for a skill never published. */
export const listingStateOf = (status: string | null): ListingState | undefined => (status === null ? undefined : listingStates.get(status));

/** The API's Skill; search and list leave the files out. */
export function skillMessage(s: SkillRecord, extra: { similarity?: number } = {}): MessageInitShape<typeof SkillSchema> {
  return {
    id: s.id,
    slug: s.slug,
    name: s.name,
    description: s.description,
    content: s.content,
    tags: s.tags,
    containers: s.containers,
    maturity: maturities.byName.get(s.maturity) ?? 0,
    visibility: visibilities.byName.get(s.visibility) ?? 0,
    state: s.state === "deprecated" ? SkillState.DEPRECATED : SkillState.ACTIVE,
    deprecatedAt: s.deprecatedAt?.toISOString(),
    deprecationMessage: s.deprecationMessage ?? undefined,
    replacedBy: s.replacedBy ?? undefined,
    version: s.version,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
    license: s.license ?? undefined,
    compatibility: s.compatibility ?? undefined,
    allowedTools: s.allowedTools,
    metadata: s.metadata,
    files: fileMessages(s.files),
    source: sources.byName.get(s.source) ?? 0,
    extraFrontmatter: s.extraFrontmatter,
    similarity: extra.similarity,
    forkOf: s.forkOf ?? undefined,
    lineage: s.lineage,
    installedFrom: s.installedFrom ?? undefined,
    listingState: listingStateOf(s.listingStatus),
    updateAvailable: s.updateAvailable ?? undefined,
    yanked: s.yanked ? { reason: s.yanked.reason, at: s.yanked.at.toISOString(), moveTo: s.yanked.moveTo ?? undefined } : undefined,
  };
}

const severities = { critical: FindingSeverity.CRITICAL, warning: FindingSeverity.WARNING, info: FindingSeverity.INFO } as const;

/** A safety finding as the API shows it. */
export const findingMessage = (f: ScanFinding): MessageInitShape<typeof ScanFindingSchema> => ({ ...f, severity: severities[f.severity] });
