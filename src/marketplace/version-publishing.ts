import type { Sql } from "../db/database.js";
import { apiError, invalidRequest, notFound } from "../errors/api-error.js";
import { hasCritical, scanSkill } from "../skills/safety-scan.js";
import { scannedFiles, versionDigest } from "../skills/skill-export.js";
import { loadSkillVersion, type SkillRecord } from "../skills/skill-store.js";
import { countInstalledCopies, findVersion, insertVersion, newestGoodVersion, yankVersion, type PublishedVersion } from "./version-store.js";

/** Records version `s`: its digest, safety scan and review. */
async function recordVersion(tx: Sql, s: SkillRecord, at: Date, holdsCritical: boolean): Promise<PublishedVersion> {
  const findings = await scanSkill(scannedFiles(s));
  const review = holdsCritical && hasCritical(findings) ? "held" : "published";
  return insertVersion(tx, { skillId: s.id, version: s.version, digest: versionDigest(s), publishedAt: at, findings, review });
}

/**
 * Records `s`, a skill's version being published: its digest and safety scan; a critical finding holds it
 * for review. A version recorded before keeps its row, so a published version never changes.
 */
export async function recordPublishedVersion(tx: Sql, s: SkillRecord, at: Date): Promise<PublishedVersion> {
  return (await findVersion(tx, s.id, s.version)) ?? recordVersion(tx, s, at, true);
}

/**
 * The version a listing serves, recorded when it was listed before versions were (its findings show, but
 * it stays published: it was public already).
 */
export async function listedVersion(tx: Sql, skillId: string, version: number, listedAt: Date): Promise<PublishedVersion> {
  return (await findVersion(tx, skillId, version)) ?? recordVersion(tx, (await loadSkillVersion(tx, skillId, version))!, listedAt, false);
}

const yankedError = (skillId: string, v: PublishedVersion, good: PublishedVersion | undefined) =>
  apiError(
    "VERSION_YANKED",
    `version ${v.version} of skill ${skillId} was yanked (${v.yank!.reason}): ${good ? `install version ${good.version}, the newest good one` : "no good version is left"}`,
    { id: skillId, version: String(v.version), ...(good ? { newestGoodVersion: String(good.version) } : {}) },
  );

/** The version to install: the one named or the newest good one. A held version is not found; a yanked one fails naming the newest good version. */
export async function installableVersion(tx: Sql, skillId: string, version: number | undefined): Promise<PublishedVersion> {
  if (version === undefined) {
    const good = await newestGoodVersion(tx, skillId);
    if (good) return good;
    throw apiError("VERSION_YANKED", `every published version of skill ${skillId} was yanked`, { id: skillId });
  }
  const v = await findVersion(tx, skillId, version);
  if (!v || v.review === "held") throw notFound(`version ${version} of marketplace skill`, skillId);
  if (v.yank) throw yankedError(skillId, v, await newestGoodVersion(tx, skillId));
  return v;
}

export const yankReasonChars = 1024;

/** Yanks a published version (by its author or an admin); a version yanked before keeps its first yank. */
export async function yankPublishedVersion(tx: Sql, skillId: string, version: number, reason: string, by: string) {
  if (version < 1) throw invalidRequest("version", "min", "must be at least 1");
  const text = reason.trim();
  if (text === "") throw invalidRequest("reason", "required", "is required: installers see why the version was withdrawn");
  if (text.length > yankReasonChars) throw invalidRequest("reason", "max_length", `must be at most ${yankReasonChars} characters`);
  const v = await findVersion(tx, skillId, version);
  if (!v) throw notFound(`published version ${version} of skill`, skillId);
  const yank = v.yank ?? { reason: text, at: new Date(), by };
  if (!v.yank) await yankVersion(tx, skillId, version, yank);
  return { version, yank, installedCopies: await countInstalledCopies(tx, skillId, version) };
}
