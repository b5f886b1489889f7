import type { Sql } from "../db/database.js";
import type { LineageEntry } from "../skills/skill-store.js";

// Listings, publications, installs and forks. A listing is a skill's place in the marketplace; its
// `version` is the published version that get, install and fork serve.

export type ListingStatus = "listed" | "unlisted" | "removed" | "held";

export interface Listing {
  skillId: string;
  workspaceId: string;
  status: ListingStatus;
  version: number;
  firstPublishedAt: Date;
  publishedAt: Date;
  installs: number;
  forks: number;
  popularity: number;
}

interface ListingRow {
  skill_id: string;
  workspace_id: string;
  status: ListingStatus;
  version: number;
  first_published_at: Date;
  published_at: Date;
  installs: number;
  forks: number;
  popularity: number;
}

const listingOf = (r: ListingRow): Listing => ({
  skillId: r.skill_id,
  workspaceId: r.workspace_id,
  status: r.status,
  version: r.version,
  firstPublishedAt: r.first_published_at,
  publishedAt: r.published_at,
  installs: r.installs,
  forks: r.forks,
  popularity: Number(r.popularity),
});

/** The listing; `forUpdate` holds it (installs, forks and moderation of one skill serialise on it). */
export async function findListing(sql: Sql, skillId: string, opts: { forUpdate?: boolean } = {}): Promise<Listing | undefined> {
  const [row] = await sql.query<ListingRow>(
    `select skill_id, workspace_id, status, version, first_published_at, published_at, installs, forks, popularity
     from marketplace_listings where skill_id = $1${opts.forUpdate ? " for update" : ""}`,
    [skillId],
  );
  return row && listingOf(row);
}

/**
 * Lists the skill at `version` (a first publication, or again after an unpublish); counts stay. `held`:
 * its only version waits for review.
 */
export async function listSkill(sql: Sql, skillId: string, workspaceId: string, version: number, at: Date, status: "listed" | "held" = "listed"): Promise<void> {
  await sql.query(
    `insert into marketplace_listings (skill_id, workspace_id, status, version, first_published_at, published_at)
     values ($1, $2, $5, $3, $4, $4)
     on conflict (skill_id) do update set status = excluded.status, version = excluded.version, published_at = excluded.published_at, removed_at = null`,
    [skillId, workspaceId, version, at, status],
  );
}

/** A listed (or held) skill's new good version becomes the published one; a held skill is listed. */
export async function publishVersion(sql: Sql, skillId: string, version: number, at: Date): Promise<void> {
  await sql.query(
    "update marketplace_listings set version = $2, published_at = $3, status = 'listed' where skill_id = $1 and status in ('listed', 'held') and version <= $2",
    [skillId, version, at],
  );
}

export async function setListingStatus(sql: Sql, skillId: string, status: ListingStatus, at: Date): Promise<void> {
  await sql.query(
    `update marketplace_listings set status = $2,
       removed_at = case when $2 = 'removed' then $3::timestamptz when $2 = 'listed' then null else removed_at end
     where skill_id = $1`,
    [skillId, status, at],
  );
}

/** The terms version accepted with a published version or a fork (the first acceptance of a version stands). */
export async function recordPublication(
  sql: Sql,
  p: { skillId: string; version: number; kind: "publish" | "fork"; termsVersion: string; keyId: string; at: Date },
): Promise<void> {
  await sql.query(
    `insert into marketplace_publications (skill_id, version, kind, terms_version, key_id, published_at)
     values ($1, $2, $3, $4, $5, $6) on conflict (skill_id, version) do nothing`,
    [p.skillId, p.version, p.kind, p.termsVersion, p.keyId, p.at],
  );
}

/** Sets a skill's visibility and queues its reindexing (the index's marketplace column follows the listing). */
export async function setVisibility(sql: Sql, skillId: string, visibility: "private" | "public"): Promise<void> {
  await sql.query(
    `with changed as (update skills set visibility = $2 where id = $1 returning id)
     insert into skill_index_outbox (skill_id) select id from changed`,
    [skillId, visibility],
  );
}

/** Queues the skill's reindexing, so the index's marketplace column follows its listing. */
export async function queueReindex(sql: Sql, skillId: string): Promise<void> {
  await sql.query("insert into skill_index_outbox (skill_id) values ($1)", [skillId]);
}

/** Records where a new copy or fork came from. */
export async function setOrigin(
  sql: Sql,
  skillId: string,
  origin: { forkOf: string | null; lineage: LineageEntry[]; installedFrom: { id: string; version: number; digest: string } | null },
): Promise<void> {
  await sql.query("update skills set fork_of = $2, lineage = $3::jsonb, installed_from = $4, installed_version = $5, installed_digest = $6 where id = $1", [
    skillId,
    origin.forkOf,
    JSON.stringify(origin.lineage),
    origin.installedFrom?.id ?? null,
    origin.installedFrom?.version ?? null,
    origin.installedFrom?.digest ?? null,
  ]);
}

export async function setInstalledVersion(sql: Sql, skillId: string, version: number, digest: string): Promise<void> {
  await sql.query("update skills set installed_version = $2, installed_digest = $3 where id = $1", [skillId, version, digest]);
}

/** The workspace's installed copy of a marketplace skill, if it has one. */
export async function installedCopyId(sql: Sql, workspaceId: string, originalId: string): Promise<string | undefined> {
  const [row] = await sql.query<{ id: string }>("select id from skills where workspace_id = $1 and installed_from = $2", [workspaceId, originalId]);
  return row?.id;
}

/** Counts a workspace's first install of a skill (installs counts distinct workspaces) and its popularity. */
export async function countInstall(sql: Sql, skillId: string, workspaceId: string, at: Date, weight: number): Promise<void> {
  await sql.query(
    `with added as (
       insert into marketplace_installs (skill_id, workspace_id, installed_at) values ($1, $2, $3)
       on conflict do nothing returning skill_id)
     update marketplace_listings set installs = installs + 1, popularity = popularity + $4
     where skill_id = (select skill_id from added)`,
    [skillId, workspaceId, at, weight],
  );
}

export async function countFork(sql: Sql, skillId: string, weight: number): Promise<void> {
  await sql.query("update marketplace_listings set forks = forks + 1, popularity = popularity + $2 where skill_id = $1", [skillId, weight]);
}

/** A listed skill as search shows it. */
export interface ListedSummary {
  id: string;
  slug: string;
  authorHandle: string;
  name: string;
  description: string;
  tags: string[];
  version: number;
  installs: number;
  forks: number;
  popularity: number;
  firstPublishedAt: Date;
  verified: boolean;
  findings: number;
  /** A fork's parent: the first entry of its lineage. */
  forkOf: LineageEntry | null;
}

interface SummaryRow {
  id: string;
  slug: string;
  author_handle: string;
  name: string;
  description: string;
  tags: string[];
  version: number;
  installs: number;
  forks: number;
  popularity: number;
  first_published_at: Date;
  verified: boolean;
  findings: number;
  fork_of: LineageEntry | null;
}

const summaryOf = (r: SummaryRow): ListedSummary => ({
  id: r.id,
  slug: r.slug,
  authorHandle: r.author_handle,
  name: r.name,
  description: r.description,
  tags: r.tags,
  version: r.version,
  installs: r.installs,
  forks: r.forks,
  popularity: Number(r.popularity),
  firstPublishedAt: r.first_published_at,
  verified: r.verified,
  findings: r.findings,
  forkOf: r.fork_of,
});

// The listing's version is the published one (a newer version may be held for review); $2 asks for verified authors only.
const summarySelect = `select s.id, v.slug, p.handle as author_handle, v.name, v.description, v.tags, l.version, l.installs, l.forks,
    l.popularity, l.first_published_at, p.verified, s.lineage -> 0 as fork_of,
    coalesce((select jsonb_array_length(mv.findings) from marketplace_versions mv where mv.skill_id = l.skill_id and mv.version = l.version), 0) as findings
  from marketplace_listings l join skills s on s.id = l.skill_id join author_profiles p on p.workspace_id = l.workspace_id
    join skill_versions v on v.skill_id = l.skill_id and v.version = l.version
  where l.status = 'listed' and s.state = 'active' and ($1::text[] is null or v.tags && $1::text[]) and (not $2::boolean or p.verified)`;

/** The listed, active skills among these ids (the re-check of search candidates). */
export async function listedSummaries(sql: Sql, ids: readonly string[], tags: string[] | null, verifiedOnly: boolean): Promise<ListedSummary[]> {
  if (ids.length === 0) return [];
  const rows = await sql.query<SummaryRow>(`${summarySelect} and l.skill_id = any($3::text[])`, [tags, verifiedOnly, ids]);
  return rows.map(summaryOf);
}

/** Where the previous page of a browse ended. */
export type BrowseCursor = { sort: "popular"; popularity: number; id: string } | { sort: "new"; publishedAt: string; id: string };

/** A page of listed, active skills: most popular or newest first, after `after` when given. */
export async function browseListed(
  sql: Sql,
  sort: "popular" | "new",
  tags: string[] | null,
  verifiedOnly: boolean,
  after: BrowseCursor | null,
  limit: number,
): Promise<ListedSummary[]> {
  const rows =
    sort === "popular"
      ? await sql.query<SummaryRow>(
          `${summarySelect} and ($3::float8 is null or (l.popularity, l.skill_id) < ($3::float8, $4::text))
           order by l.popularity desc, l.skill_id desc limit $5`,
          [tags, verifiedOnly, after?.sort === "popular" ? after.popularity : null, after?.id ?? null, limit],
        )
      : await sql.query<SummaryRow>(
          `${summarySelect} and ($3::timestamptz is null or (l.first_published_at, l.skill_id) < ($3::timestamptz, $4::text))
           order by l.first_published_at desc, l.skill_id desc limit $5`,
          [tags, verifiedOnly, after?.sort === "new" ? after.publishedAt : null, after?.id ?? null, limit],
        );
  return rows.map(summaryOf);
}

/** The skill a public get names: by id, or by slug and author handle. */
export async function findListedSkillId(sql: Sql, ref: { id: string } | { slug: string; authorHandle: string }): Promise<string | undefined> {
  if ("id" in ref) return ref.id;
  const [row] = await sql.query<{ id: string }>(
    "select s.id from skills s join author_profiles p on p.workspace_id = s.workspace_id where p.handle = $1 and s.slug = $2",
    [ref.authorHandle, ref.slug],
  );
  return row?.id;
}

/** `slug`, or when the workspace has it, the first free of slug-2, slug-3, ... (cut to fit 64 characters). */
export async function freeSlug(sql: Sql, workspaceId: string, slug: string): Promise<string> {
  const taken = new Set(
    (await sql.query<{ slug: string }>("select slug from skills where workspace_id = $1 and (slug = $2 or slug like $3) limit 10000", [workspaceId, slug, `${slug.slice(0, 58)}-%`])).map((r) => r.slug),
  );
  if (!taken.has(slug)) return slug;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${slug.slice(0, 64 - suffix.length).replace(/-+$/, "")}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}
