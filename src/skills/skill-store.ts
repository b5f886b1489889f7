import type { JsonObject } from "@bufbuild/protobuf";
import type { Scope } from "../accounts/container-scope.js";
import type { Sql } from "../db/database.js";
import { apiError } from "../errors/api-error.js";
import type { ImportedSkillMd, SkillDraft, StoredFile } from "./skill-rules.js";

/** One ancestor of a fork, as it was when the fork was made. */
export interface LineageEntry {
  id: string;
  slug: string;
  authorHandle: string;
  version: number;
}

/** Where a skill came from and where it stands in the marketplace (see src/marketplace). */
export interface SkillOrigin {
  /** A fork's parent; never changes. */
  forkOf: string | null;
  /** A fork's ancestors, parent first; never changes. */
  lineage: LineageEntry[];
  /** An installed copy's original and the published version it holds. */
  installedFrom: { id: string; version: number; digest: string } | null;
  /** An installed copy: the original's newest good version, when newer than the copy's. */
  updateAvailable: { version: number; digest: string } | null;
  /** An installed copy of a yanked version: why and when, and the newest good version to move to. */
  yanked: { reason: string; at: Date; moveTo: { version: number; digest: string } | null } | null;
  /** listed | unlisted | removed; null when the skill was never published. */
  listingStatus: string | null;
}

/** One version of a skill as stored: its validated fields plus identity, state and history. */
export interface SkillRecord extends SkillDraft, SkillOrigin {
  id: string;
  workspaceId: string;
  visibility: string;
  source: string;
  /** active | deprecated (the current state, whichever version is read). */
  state: string;
  deprecatedAt: Date | null;
  deprecationMessage: string | null;
  replacedBy: string | null;
  version: number;
  keyId: string;
  createdAt: Date;
  updatedAt: Date;
}

interface SkillRow {
  id: string;
  workspace_id: string;
  slug: string;
  name: string;
  description: string;
  content: string;
  tags: string[];
  containers: string[];
  maturity: string;
  visibility: string;
  source: string;
  state: string;
  deprecated_at: Date | null;
  deprecation_message: string | null;
  replaced_by: string | null;
  license: string | null;
  compatibility: string | null;
  allowed_tools: string[];
  metadata: Record<string, string>;
  extra_frontmatter: JsonObject;
  imported_md: ImportedSkillMd | null;
  files: StoredFile[] | null;
  version: number;
  key_id: string;
  created_at: Date;
  updated_at: Date;
  fork_of: string | null;
  lineage: LineageEntry[];
  installed_from: string | null;
  installed_version: number | null;
  installed_digest: string | null;
  newest_good: { version: number; digest: string } | null;
  installed_yank: { reason: string; at: string } | null;
  listing_status: string | null;
}

const recordOf = (r: SkillRow): SkillRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  slug: r.slug,
  name: r.name,
  description: r.description,
  content: r.content,
  tags: r.tags,
  containers: r.containers,
  maturity: r.maturity,
  visibility: r.visibility,
  source: r.source,
  state: r.state,
  deprecatedAt: r.deprecated_at,
  deprecationMessage: r.deprecation_message,
  replacedBy: r.replaced_by,
  license: r.license,
  compatibility: r.compatibility,
  allowedTools: r.allowed_tools,
  metadata: r.metadata,
  extraFrontmatter: r.extra_frontmatter,
  importedMd: r.imported_md,
  files: r.files ?? [],
  version: r.version,
  keyId: r.key_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  forkOf: r.fork_of,
  lineage: r.lineage,
  installedFrom: r.installed_from === null ? null : { id: r.installed_from, version: r.installed_version!, digest: r.installed_digest ?? "" },
  updateAvailable: r.newest_good !== null && r.newest_good.version > r.installed_version! ? r.newest_good : null,
  yanked:
    r.installed_yank === null
      ? null
      : { reason: r.installed_yank.reason, at: new Date(r.installed_yank.at), moveTo: r.newest_good?.version === r.installed_version ? null : r.newest_good },
  listingStatus: r.listing_status,
});

/**
 * Every read is limited to the caller's workspace and, for a scoped key, to skills of its container
 * or workspace-wide ones (no containers). $2 is the workspace, $3 the key's container or null.
 */
export const visibleSkill = (alias: string) =>
  `${alias}.workspace_id = $2 and ($3::text is null or cardinality(${alias}.containers) = 0 or $3 = any(${alias}.containers))`;

const versionFields =
  "slug, name, description, content, tags, containers, maturity, license, compatibility, allowed_tools, metadata, extra_frontmatter, key_id, imported_md";
const currentOnly = "visibility, source, state, deprecated_at, deprecation_message, replaced_by, version, created_at, updated_at";

/** The installed copy (alias s) holds a yanked version. */
const installedYanked = `exists (select 1 from marketplace_versions y
  where y.skill_id = s.installed_from and y.version = s.installed_version and y.yanked_at is not null)`;

/** Origin columns of the skill (alias s), its listing status and, for an installed copy, its original's state. */
const originColumns = `s.fork_of, s.lineage, s.installed_from, s.installed_version, s.installed_digest,
  (select l.status from marketplace_listings l where l.skill_id = s.id) as listing_status,
  (select jsonb_build_object('version', g.version, 'digest', g.digest) from marketplace_versions g
    where g.skill_id = s.installed_from and g.review <> 'held' and g.yanked_at is null order by g.version desc limit 1) as newest_good,
  (select jsonb_build_object('reason', y.yank_reason, 'at', y.yanked_at) from marketplace_versions y
    where y.skill_id = s.installed_from and y.version = s.installed_version and y.yanked_at is not null) as installed_yank`;

const columns = (alias: string, files: string) =>
  `${alias}.id, ${alias}.workspace_id, ${versionFields
    .split(", ")
    .map((c) => `${alias}.${c}`)
    .join(", ")}, ${currentOnly
    .split(", ")
    .map((c) => `${alias}.${c}`)
    .join(", ")}, ${files} as files, ${originColumns}`;

/** Current rows with their current version's files. */
const currentSelect = (files: boolean) =>
  `select ${columns("s", files ? "v.files" : "null::jsonb")} from skills s${
    files ? " join skill_versions v on v.skill_id = s.id and v.version = s.version" : ""
  }`;

const isUniqueViolation = (err: unknown) => (err as { code?: unknown } | null)?.code === "23505";

function versionParams(s: SkillRecord): unknown[] {
  return [
    s.slug,
    s.name,
    s.description,
    s.content,
    s.tags,
    s.containers,
    s.maturity,
    s.license,
    s.compatibility,
    s.allowedTools,
    JSON.stringify(s.metadata),
    JSON.stringify(s.extraFrontmatter),
    s.keyId,
    s.importedMd ? JSON.stringify(s.importedMd) : null,
  ];
}

const slugTaken = (slug: string) =>
  apiError("already_exists", `a skill with slug ${slug} already exists in this workspace`, { field: "slug", slug });

/** Inserts a new skill (version 1), its first version and its indexing job in one statement. */
export async function insertSkill(sql: Sql, s: SkillRecord): Promise<void> {
  try {
    await sql.query(
      `with inserted as (
         insert into skills (id, workspace_id, ${versionFields}, ${currentOnly})
         values ($15, $16, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12::jsonb, $13, $14::jsonb,
           $17, $18, 'active', null, null, null, 1, $19, $19)
         returning id),
       versions as (
         insert into skill_versions (skill_id, version, ${versionFields}, files, created_at)
         values ($15, 1, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12::jsonb, $13, $14::jsonb, $20::jsonb, $19))
       insert into skill_index_outbox (skill_id) select id from inserted`,
      [...versionParams(s), s.id, s.workspaceId, s.visibility, s.source, s.createdAt, JSON.stringify(s.files)],
    );
  } catch (err) {
    if (isUniqueViolation(err)) throw slugTaken(s.slug);
    throw err;
  }
}

/** Stores `next` as the skill's new current version, appends it to its history and queues its reindexing. */
export async function saveSkillVersion(sql: Sql, next: SkillRecord): Promise<void> {
  try {
    await sql.query(
      `with updated as (
         update skills set slug = $1, name = $2, description = $3, content = $4, tags = $5, containers = $6,
           maturity = $7, license = $8, compatibility = $9, allowed_tools = $10, metadata = $11::jsonb,
           extra_frontmatter = $12::jsonb, key_id = $13, imported_md = $14::jsonb, version = $16, updated_at = $17, source = $19
         where id = $15 and version = $16 - 1
         returning id),
       versions as (
         insert into skill_versions (skill_id, version, ${versionFields}, files, created_at)
         select $15, $16, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12::jsonb, $13, $14::jsonb, $18::jsonb, $17 from updated)
       insert into skill_index_outbox (skill_id) select id from updated`,
      [...versionParams(next), next.id, next.version, next.updatedAt, JSON.stringify(next.files), next.source],
    );
  } catch (err) {
    if (isUniqueViolation(err)) throw slugTaken(next.slug);
    throw err;
  }
}

/** Marks a skill deprecated (no new version) and queues its reindexing, so search filters it out. */
export async function deprecateSkill(sql: Sql, id: string, at: Date, message: string | null, replacedBy: string | null): Promise<void> {
  await sql.query(
    `with changed as (
       update skills set state = 'deprecated', deprecated_at = $2, deprecation_message = $3, replaced_by = $4 where id = $1 returning id)
     insert into skill_index_outbox (skill_id) select id from changed`,
    [id, at, message, replacedBy],
  );
}

/** How a request names a skill. */
export type SkillRef = { id: string } | { slug: string };

const refCondition = (ref: SkillRef) => ("id" in ref ? "s.id = $1" : "s.slug = $1");
const refValue = (ref: SkillRef) => ("id" in ref ? ref.id : ref.slug);

/** The current version, visible to the scope; `forUpdate` locks the row until the transaction ends. */
export async function findSkill(sql: Sql, scope: Scope, ref: SkillRef, opts: { files?: boolean; forUpdate?: boolean } = {}) {
  const [row] = await sql.query<SkillRow>(
    `${currentSelect(opts.files ?? true)} where ${refCondition(ref)} and ${visibleSkill("s")}${opts.forUpdate ? " for update of s" : ""}`,
    [refValue(ref), scope.workspaceId, scope.container],
  );
  return row && recordOf(row);
}

/** A version's row with the skill's current state and origin. */
const versionSelect = `select s.id, s.workspace_id, ${versionFields
  .split(", ")
  .map((c) => `v.${c}`)
  .join(", ")}, s.visibility, s.source, s.state, s.deprecated_at, s.deprecation_message, s.replaced_by,
   v.version, s.created_at, v.created_at as updated_at, v.files, ${originColumns}
 from skills s join skill_versions v on v.skill_id = s.id`;

/** An earlier (or the current) version; state and deprecation are the skill's current ones. */
export async function findSkillVersion(sql: Sql, scope: Scope, ref: SkillRef, version: number): Promise<SkillRecord | undefined> {
  const [row] = await sql.query<SkillRow>(`${versionSelect} where ${refCondition(ref)} and ${visibleSkill("s")} and v.version = $4`, [
    refValue(ref),
    scope.workspaceId,
    scope.container,
    version,
  ]);
  return row && recordOf(row);
}

/** One version of a skill, whoever owns it: for the marketplace, which serves the published version. */
export async function loadSkillVersion(sql: Sql, id: string, version: number): Promise<SkillRecord | undefined> {
  const [row] = await sql.query<SkillRow>(`${versionSelect} where s.id = $1 and v.version = $2`, [id, version]);
  return row && recordOf(row);
}

/** Filters of list and search, applied in SQL; absent filters are null. */
export interface SkillQueryFilter {
  tags: string[] | null;
  maturities: string[] | null;
  visibilities: string[] | null;
  /** Skills of any of these containers, and workspace-wide ones. */
  containers: string[] | null;
  sources: string[] | null;
  includeDeprecated: boolean;
  /** Only installed copies of a yanked version. */
  yankedOnly: boolean;
}

const filterCondition = `($4::text[] is null or s.tags && $4::text[])
  and ($5::text[] is null or s.maturity = any($5::text[]))
  and ($6::text[] is null or s.visibility = any($6::text[]))
  and ($7::text[] is null or cardinality(s.containers) = 0 or s.containers && $7::text[])
  and ($8::text[] is null or s.source = any($8::text[]))
  and ($9::boolean or s.state = 'active')
  and (not $10::boolean or ${installedYanked})`;

const filterParams = (f: SkillQueryFilter) => [f.tags, f.maturities, f.visibilities, f.containers, f.sources, f.includeDeprecated, f.yankedOnly];

/** A page of skills, newest first, after the id `before` (exclusive) when given; without files. */
export async function listSkills(sql: Sql, scope: Scope, filter: SkillQueryFilter, before: string | null, limit: number): Promise<SkillRecord[]> {
  const rows = await sql.query<SkillRow>(
    `${currentSelect(false)} where ($1::text is null or s.id < $1) and ${visibleSkill("s")} and ${filterCondition}
     order by s.id desc limit $11`,
    [before, scope.workspaceId, scope.container, ...filterParams(filter), limit],
  );
  return rows.map(recordOf);
}

/** The skills among these ids that the scope sees and the filter admits; without files. */
export async function findSkills(sql: Sql, scope: Scope, ids: readonly string[], filter: SkillQueryFilter): Promise<SkillRecord[]> {
  if (ids.length === 0) return [];
  const rows = await sql.query<SkillRow>(`${currentSelect(false)} where s.id = any($1::text[]) and ${visibleSkill("s")} and ${filterCondition}`, [
    ids,
    scope.workspaceId,
    scope.container,
    ...filterParams(filter),
  ]);
  return rows.map(recordOf);
}

/** The current rows of these skills, whoever owns them: for internal work such as indexing. */
export async function loadSkills(sql: Sql, ids: readonly string[]): Promise<SkillRecord[]> {
  const rows = await sql.query<SkillRow>(`${currentSelect(false)} where s.id = any($1::text[])`, [ids]);
  return rows.map(recordOf);
}
