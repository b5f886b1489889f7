import type { AgentPrincipal } from "../accounts/principal.js";
import { newId } from "../ids.js";
import type { SkillDraft } from "./skill-rules.js";
import { skillContainers } from "./skill-scope.js";
import type { SkillRecord } from "./skill-store.js";

/** Version 1 of a new skill in the key's workspace (its containers by the scoping rules), before it is stored. */
export function newSkillRecord(
  p: AgentPrincipal,
  draft: SkillDraft,
  source: string,
  visibility: "private" | "public" = "private",
): SkillRecord {
  const now = new Date();
  return {
    ...draft,
    containers: skillContainers(p, draft.containers),
    id: newId("skl"),
    workspaceId: p.workspaceId,
    visibility,
    source,
    state: "active",
    deprecatedAt: null,
    deprecationMessage: null,
    replacedBy: null,
    version: 1,
    keyId: p.keyId,
    createdAt: now,
    updatedAt: now,
    forkOf: null,
    lineage: [],
    installedFrom: null,
    updateAvailable: null,
    yanked: null,
    listingStatus: null,
  };
}

/** The fields of a stored version that a copy or fork takes over (the containers are the new owner's). */
export const draftOfRecord = (s: SkillRecord): SkillDraft => ({
  slug: s.slug,
  name: s.name,
  description: s.description,
  content: s.content,
  tags: s.tags,
  containers: [],
  maturity: s.maturity,
  license: s.license,
  compatibility: s.compatibility,
  allowedTools: s.allowedTools,
  metadata: s.metadata,
  extraFrontmatter: s.extraFrontmatter,
  files: s.files,
  importedMd: s.importedMd,
});
