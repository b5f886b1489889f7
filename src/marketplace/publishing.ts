import { scopeOf } from "../accounts/container-scope.js";
import type { AgentPrincipal } from "../accounts/principal.js";
import type { Database, Sql } from "../db/database.js";
import { apiError, invalidRequest, notFound } from "../errors/api-error.js";
import type { SkillPublishing } from "../skills/skill-service.js";
import { assertNotFork } from "../skills/skill-origin-rules.js";
import { assertMayWriteSkill } from "../skills/skill-scope.js";
import { findSkill, loadSkillVersion, type SkillRecord, type SkillRef } from "../skills/skill-store.js";
import type { UsageMeter } from "../usage/usage-meter.js";
import { moveInstalledCopy } from "./installed-copies.js";
import { contentDiff, fieldChanges } from "./version-changes.js";
import { installableVersion, recordPublishedVersion, yankPublishedVersion } from "./version-publishing.js";
import { newestGoodVersion } from "./version-store.js";
import { ensureProfile } from "./author-profiles.js";
import { assertMarketplaceEnabled } from "./marketplace-rules.js";
import { findListing, listSkill, publishVersion, recordPublication, setListingStatus, setVisibility } from "./marketplace-store.js";

export interface PublishingOptions {
  enabled: boolean;
  termsVersion: string;
  usage: UsageMeter;
}

const refText = (ref: SkillRef) => ("id" in ref ? ref.id : ref.slug);

/** skills/publish-public and skills/unpublish, and the publication of a listed skill's new versions. */
export function skillPublishing(db: Database, opts: PublishingOptions): SkillPublishing {
  /** The caller's skill, held for the transaction, that the key may change. */
  const ownSkill = async (tx: Sql, p: AgentPrincipal, ref: SkillRef): Promise<SkillRecord> => {
    const skill = await findSkill(tx, scopeOf(p), ref, { forUpdate: true });
    if (!skill) throw notFound("skill", refText(ref));
    assertMayWriteSkill(p, skill.containers);
    return skill;
  };
  const reread = async (tx: Sql, p: AgentPrincipal, id: string) => (await findSkill(tx, scopeOf(p), { id }))!;

  return {
    async publish(p, ref) {
      assertMarketplaceEnabled(opts.enabled);
      const skill = await db.transaction(async (tx) => {
        const current = await ownSkill(tx, p, ref);
        if (current.installedFrom !== null) {
          throw apiError("forbidden", `skill ${current.id} is an installed copy of ${current.installedFrom.id}: only its author publishes it`, {
            id: current.id,
            reason: "installed_copy",
          });
        }
        const listing = await findListing(tx, current.id, { forUpdate: true });
        if (listing?.status === "removed") {
          throw apiError("forbidden", `skill ${current.id} was taken down by moderation: it is listed again only if an appeal is granted`, {
            id: current.id,
            reason: "removed",
          });
        }
        const at = new Date();
        const version = await recordPublishedVersion(tx, current, at);
        if (listing?.status !== "listed" && listing?.status !== "held") {
          await ensureProfile(tx, p.workspaceId, p.workspace);
          // A held version leaves an earlier good one listed; with none, the skill waits for review.
          const good = version.review === "held" ? await newestGoodVersion(tx, current.id) : version;
          await listSkill(tx, current.id, p.workspaceId, good?.version ?? version.version, at, good ? "listed" : "held");
          await recordPublication(tx, { skillId: current.id, version: current.version, kind: "publish", termsVersion: opts.termsVersion, keyId: p.keyId, at });
          await setVisibility(tx, current.id, "public");
        }
        return { skill: await reread(tx, p, current.id), version };
      });
      return { ...skill, termsVersion: opts.termsVersion };
    },

    async unpublish(p, ref) {
      assertMarketplaceEnabled(opts.enabled);
      return db.transaction(async (tx) => {
        const current = await ownSkill(tx, p, ref);
        assertNotFork(current, "unpublished");
        const listing = await findListing(tx, current.id, { forUpdate: true });
        // A removed skill stays removed (only a granted appeal lists it again), but its owner may make it private.
        if (listing?.status === "listed" || listing?.status === "held") await setListingStatus(tx, current.id, "unlisted", new Date());
        if (current.visibility !== "private") await setVisibility(tx, current.id, "private");
        return reread(tx, p, current.id);
      });
    },

    async publishNewVersion(tx, p, next) {
      if (next.listingStatus !== "listed" && next.listingStatus !== "held") return;
      const at = next.updatedAt;
      const version = await recordPublishedVersion(tx, next, at);
      if (version.review !== "held") await publishVersion(tx, next.id, next.version, at);
      await recordPublication(tx, { skillId: next.id, version: next.version, kind: "publish", termsVersion: opts.termsVersion, keyId: p.keyId, at });
    },

    async yank(p, ref, version, reason) {
      assertMarketplaceEnabled(opts.enabled);
      const result = await db.transaction(async (tx) => {
        const current = await ownSkill(tx, p, ref);
        return yankPublishedVersion(tx, current.id, version, reason, p.keyId);
      });
      return result;
    },

    async upgrade(p, ref, version, dryRun) {
      assertMarketplaceEnabled(opts.enabled);
      return db.transaction(async (tx) => {
        const current = await ownSkill(tx, p, ref);
        if (current.installedFrom === null) throw invalidRequest("id", "installed_copy", `skill ${current.id} is not an installed copy of a marketplace skill`);
        const originalId = current.installedFrom.id;
        const listing = await findListing(tx, originalId);
        if (!listing) throw notFound("marketplace skill", originalId);
        const target = await installableVersion(tx, originalId, version);
        const from = (await loadSkillVersion(tx, originalId, current.installedFrom.version))!;
        const to = (await loadSkillVersion(tx, originalId, target.version))!;
        const fromRef = { version: current.installedFrom.version, digest: current.installedFrom.digest };
        const change = { from: fromRef, to: { version: target.version, digest: target.digest }, changes: fieldChanges(from, to), diff: contentDiff(from, to) };
        if (dryRun || target.version === current.installedFrom.version) return { skill: current, ...change, applied: false };
        await moveInstalledCopy(tx, p, current, to, target, opts.usage);
        return { skill: await reread(tx, p, current.id), ...change, applied: true };
      });
    },
  };
}
