import type { Sql } from "../db/database.js";
import type { ScanFinding } from "../skills/safety-scan.js";

// Published versions of marketplace skills (table marketplace_versions). A row is written once, when the
// version is published, and only its review (held -> cleared) and yank change afterwards.

export type VersionReview = "published" | "held" | "cleared";

export interface YankRecord {
  reason: string;
  at: Date;
  by: string;
}

export interface PublishedVersion {
  skillId: string;
  version: number;
  digest: string;
  publishedAt: Date;
  findings: ScanFinding[];
  review: VersionReview;
  yank: YankRecord | null;
}

interface VersionRow {
  skill_id: string;
  version: number;
  digest: string;
  published_at: Date;
  findings: ScanFinding[];
  review: VersionReview;
  yanked_at: Date | null;
  yank_reason: string | null;
  yanked_by: string | null;
}

const versionOf = (r: VersionRow): PublishedVersion => ({
  skillId: r.skill_id,
  version: r.version,
  digest: r.digest,
  publishedAt: r.published_at,
  findings: r.findings,
  review: r.review,
  yank: r.yanked_at === null ? null : { reason: r.yank_reason!, at: r.yanked_at, by: r.yanked_by! },
});

const columns = "skill_id, version, digest, published_at, findings, review, yanked_at, yank_reason, yanked_by";

/** Records a published version; a version already recorded keeps its row (its content cannot change). */
export async function insertVersion(sql: Sql, v: Omit<PublishedVersion, "yank">): Promise<PublishedVersion> {
  await sql.query(
    `insert into marketplace_versions (skill_id, version, digest, published_at, findings, review)
     values ($1, $2, $3, $4, $5::jsonb, $6) on conflict (skill_id, version) do nothing`,
    [v.skillId, v.version, v.digest, v.publishedAt, JSON.stringify(v.findings), v.review],
  );
  return (await findVersion(sql, v.skillId, v.version))!;
}

export async function findVersion(sql: Sql, skillId: string, version: number): Promise<PublishedVersion | undefined> {
  const [row] = await sql.query<VersionRow>(`select ${columns} from marketplace_versions where skill_id = $1 and version = $2`, [skillId, version]);
  return row && versionOf(row);
}

/** Newest first; held versions only when asked (for the author). */
export async function listVersions(sql: Sql, skillId: string, withHeld: boolean): Promise<PublishedVersion[]> {
  const rows = await sql.query<VersionRow>(
    `select ${columns} from marketplace_versions where skill_id = $1 and ($2::boolean or review <> 'held') order by version desc limit 1000`,
    [skillId, withHeld],
  );
  return rows.map(versionOf);
}

/** The newest good version: published or cleared, and not yanked (what install takes by default). */
export async function newestGoodVersion(sql: Sql, skillId: string): Promise<PublishedVersion | undefined> {
  const [row] = await sql.query<VersionRow>(
    `select ${columns} from marketplace_versions where skill_id = $1 and review <> 'held' and yanked_at is null order by version desc limit 1`,
    [skillId],
  );
  return row && versionOf(row);
}

export async function yankVersion(sql: Sql, skillId: string, version: number, yank: YankRecord): Promise<void> {
  await sql.query("update marketplace_versions set yanked_at = $3, yank_reason = $4, yanked_by = $5 where skill_id = $1 and version = $2", [
    skillId,
    version,
    yank.at,
    yank.reason,
    yank.by,
  ]);
}

export async function clearVersion(sql: Sql, skillId: string, version: number): Promise<void> {
  await sql.query("update marketplace_versions set review = 'cleared' where skill_id = $1 and version = $2 and review = 'held'", [skillId, version]);
}

/** Installed copies of the version, in every workspace. */
export async function countInstalledCopies(sql: Sql, skillId: string, version: number): Promise<number> {
  const [row] = await sql.query<{ n: number }>("select count(*)::int as n from skills where installed_from = $1 and installed_version = $2", [skillId, version]);
  return row!.n;
}

export interface HeldVersion extends PublishedVersion {
  slug: string;
  authorHandle: string;
}

/** Versions waiting for review, oldest first. */
export async function heldVersions(sql: Sql, limit: number): Promise<HeldVersion[]> {
  const rows = await sql.query<VersionRow & { slug: string; handle: string }>(
    `select ${columns
      .split(", ")
      .map((c) => `v.${c}`)
      .join(", ")}, s.slug, p.handle
     from marketplace_versions v join skills s on s.id = v.skill_id join author_profiles p on p.workspace_id = s.workspace_id
     where v.review = 'held' order by v.published_at, v.skill_id limit $1`,
    [limit],
  );
  return rows.map((r) => ({ ...versionOf(r), slug: r.slug, authorHandle: r.handle }));
}
