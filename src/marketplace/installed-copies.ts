import type { AgentPrincipal } from "../accounts/principal.js";
import type { Sql } from "../db/database.js";
import { draftOfRecord } from "../skills/new-skill.js";
import { saveSkillVersion, type SkillRecord } from "../skills/skill-store.js";
import { embeddedText } from "../skills/skill-text.js";
import type { UsageMeter } from "../usage/usage-meter.js";
import { setInstalledVersion } from "./marketplace-store.js";
import type { PublishedVersion } from "./version-store.js";

/**
 * Moves an installed copy to another published version of its original: a new version of the copy with
 * that version's content (the copy's slug and containers stay) and the installed version and digest.
 */
export async function moveInstalledCopy(
  tx: Sql,
  p: AgentPrincipal,
  current: SkillRecord,
  published: SkillRecord,
  target: PublishedVersion,
  usage: UsageMeter,
): Promise<SkillRecord> {
  const next: SkillRecord = {
    ...current,
    ...draftOfRecord(published),
    slug: current.slug,
    containers: current.containers,
    version: current.version + 1,
    keyId: p.keyId,
    updatedAt: new Date(),
    installedFrom: { id: target.skillId, version: target.version, digest: target.digest },
  };
  await usage.chargeReembedding(tx, p, embeddedText(current), embeddedText(next));
  await saveSkillVersion(tx, next);
  await setInstalledVersion(tx, current.id, target.version, target.digest);
  return next;
}
