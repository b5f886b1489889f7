import { scopeOf } from "../accounts/container-scope.js";
import type { AgentPrincipal } from "../accounts/principal.js";
import type { Database, Sql } from "../db/database.js";
import { apiError, notFound } from "../errors/api-error.js";
import type { SkillPublishing } from "../skills/skill-service.js";
import { assertNotFork } from "../skills/skill-origin-rules.js";
import { assertMayWriteSkill } from "../skills/skill-scope.js";
import { findSkill, type SkillRecord, type SkillRef } from "../skills/skill-store.js";
import { ensureProfile } from "./author-profiles.js";
import { assertMarketplaceEnabled } from "./marketplace-rules.js";
import { findListing, listSkill, publishVersion, recordPublication, setListingStatus, setVisibility } from "./marketplace-store.js";

export interface PublishingOptions {
  enabled: boolean;
  termsVersion: string;
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
        if (listing?.status !== "listed") {
          const at = new Date();
          await ensureProfile(tx, p.workspaceId, p.workspace);
          await listSkill(tx, current.id, p.workspaceId, current.version, at);
          await recordPublication(tx, { skillId: current.id, version: current.version, kind: "publish", termsVersion: opts.termsVersion, keyId: p.keyId, at });
          await setVisibility(tx, current.id, "public");
        }
        return reread(tx, p, current.id);
      });
      return { skill, termsVersion: opts.termsVersion };
    },

    async unpublish(p, ref) {
      assertMarketplaceEnabled(opts.enabled);
      return db.transaction(async (tx) => {
        const current = await ownSkill(tx, p, ref);
        assertNotFork(current, "unpublished");
        const listing = await findListing(tx, current.id, { forUpdate: true });
        // A removed skill stays removed (only a granted appeal lists it again), but its owner may make it private.
        if (listing?.status === "listed") await setListingStatus(tx, current.id, "unlisted", new Date());
        if (current.visibility !== "private") await setVisibility(tx, current.id, "private");
        return reread(tx, p, current.id);
      });
    },

    async publishNewVersion(tx, p, next) {
      if (next.listingStatus !== "listed") return;
      const at = next.updatedAt;
      await publishVersion(tx, next.id, next.version, at);
      await recordPublication(tx, { skillId: next.id, version: next.version, kind: "publish", termsVersion: opts.termsVersion, keyId: p.keyId, at });
    },
  };
}
