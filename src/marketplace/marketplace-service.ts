import type { ServiceImpl } from "@connectrpc/connect";
import { z } from "zod";
import { MarketplaceSort, type MarketplaceService } from "../../gen/agent/v1/marketplace_pb.js";
import { scopeOf } from "../accounts/container-scope.js";
import { agentPrincipal, type AgentPrincipal } from "../accounts/principal.js";
import type { Database, Sql } from "../db/database.js";
import { apiError, invalidRequest, notFound } from "../errors/api-error.js";
import { newId } from "../ids.js";
import type { SkillVectorIndex } from "../search/skills/skill-vector-index.js";
import { draftOfRecord, newSkillRecord } from "../skills/new-skill.js";
import { skillMessage } from "../skills/skill-message.js";
import { skillFieldRules, slugRule } from "../skills/skill-rules.js";
import { assertMayWriteSkill } from "../skills/skill-scope.js";
import { rankSkillCandidates } from "../skills/skill-search.js";
import { findSkill, insertSkill, loadSkillVersion } from "../skills/skill-store.js";
import { embeddedText } from "../skills/skill-text.js";
import { withHeaders } from "../usage/admission.js";
import type { UsageMeter } from "../usage/usage-meter.js";
import { parseOrThrow } from "../validation.js";
import { ensureProfile, findProfile } from "./author-profiles.js";
import { marketplaceSkillMessage, reportMessage, appealMessage, summaryMessage, versionMessage } from "./marketplace-message.js";
import { moveInstalledCopy } from "./installed-copies.js";
import { installableVersion, listedVersion, recordPublishedVersion } from "./version-publishing.js";
import { findVersion, listVersions, newestGoodVersion } from "./version-store.js";
import {
  appealRetryAfterSeconds,
  appealWindowMs,
  lineageOf,
  marketplaceLimits,
  optionalText,
  popularityWeight,
  reasonName,
} from "./marketplace-rules.js";
import {
  browseListed,
  countFork,
  countInstall,
  findListedSkillId,
  findListing,
  freeSlug,
  installedCopyId,
  listedSummaries,
  listSkill,
  recordPublication,
  setOrigin,
  type BrowseCursor,
} from "./marketplace-store.js";
import { appealTimesSince, fileReport, insertAppeal, lockOwner, pendingAppealOf } from "./moderation-store.js";
import type { MarketplaceTerms } from "./terms.js";

export interface MarketplaceServiceOptions {
  terms: MarketplaceTerms;
  index: SkillVectorIndex;
  embedQuery(text: string): Promise<Float32Array>;
  usage: UsageMeter;
  /** Runs after every committed write that changes what search finds; resolves once indexed (or queued). */
  afterWrite: () => Promise<void>;
}

type PageToken = { kind: "query"; offset: number } | BrowseCursor;

const tokenRules = z.union([
  z.object({ kind: z.literal("query"), offset: z.number().int().min(0).max(marketplaceLimits.maxQueryResults) }),
  z.object({ sort: z.literal("popular"), popularity: z.number(), id: z.string().max(64) }),
  z.object({ sort: z.literal("new"), publishedAt: z.iso.datetime(), id: z.string().max(64) }),
]);

const pageToken = {
  encode: (t: PageToken) => Buffer.from(JSON.stringify(t)).toString("base64url"),
  decode(token: string): PageToken | null {
    if (token === "") return null;
    const notOurs = () => invalidRequest("pageToken", "format", "is not a token from a previous page");
    if (token.length > 512) throw notOurs();
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(token, "base64url").toString());
    } catch {
      throw notOurs();
    }
    const parsed = tokenRules.safeParse(json);
    if (!parsed.success) throw notOurs();
    return parsed.data;
  },
};

const searchRules = z.object({
  query: z
    .string()
    .max(marketplaceLimits.queryChars, `must be at most ${marketplaceLimits.queryChars} characters`)
    .refine((s) => s.trim().length > 0, { message: "must not be blank", params: { rule: "required" } })
    .optional(),
  tags: z.array(z.string().min(1, "must not be empty").max(64)).max(32),
  limit: z.number().int().min(1, "must be 1 to 50").max(marketplaceLimits.maxLimit, "must be 1 to 50").optional(),
});

const sortNames = new Map<number, "popular" | "new">([
  [MarketplaceSort.UNSPECIFIED, "popular"],
  [MarketplaceSort.POPULAR, "popular"],
  [MarketplaceSort.NEW, "new"],
]);

const requiredId = (id: string, field = "id") => {
  if (id === "") throw invalidRequest(field, "required", "is required");
  return id;
};

const versionNumber = (version: number | undefined, field = "version") => {
  if (version !== undefined && version < 1) throw invalidRequest(field, "min", "must be at least 1");
  return version;
};

export function marketplaceService(db: Database, opts: MarketplaceServiceOptions): ServiceImpl<typeof MarketplaceService> {
  /**
   * A listed skill at the version named (or its newest good one), held for the transaction (its counters
   * change); not_found for anything else, VERSION_YANKED for a yanked version.
   */
  const listedSkill = async (tx: Sql, id: string, version?: number) => {
    const listing = await findListing(tx, id, { forUpdate: true });
    if (listing?.status !== "listed") throw notFound("marketplace skill", id);
    await listedVersion(tx, id, listing.version, listing.publishedAt);
    const target = await installableVersion(tx, id, version);
    const published = (await loadSkillVersion(tx, id, target.version))!;
    const profile = await findProfile(tx, listing.workspaceId);
    return { listing, published, target, handle: profile!.handle };
  };

  /** Installs or moves the workspace's copy to the version; the caller's key must be able to write it. */
  const install = async (tx: Sql, p: AgentPrincipal, id: string, version: number | undefined) => {
    const { published, target } = await listedSkill(tx, id, version);
    const copyId = await installedCopyId(tx, p.workspaceId, id);
    const workspaceScope = { workspaceId: p.workspaceId, container: null };
    const installedFrom = { id, version: target.version, digest: target.digest };
    if (copyId !== undefined) {
      const current = (await findSkill(tx, workspaceScope, { id: copyId }, { forUpdate: true }))!;
      assertMayWriteSkill(p, current.containers);
      if (current.installedFrom?.version !== target.version) await moveInstalledCopy(tx, p, current, published, target, opts.usage);
      return { copyId, created: false, slugTaken: undefined };
    }
    const slug = await freeSlug(tx, p.workspaceId, published.slug);
    const record = newSkillRecord(p, { ...draftOfRecord(published), slug }, "installed");
    await opts.usage.reserveSkill(tx, p, embeddedText(record));
    await insertSkill(tx, record);
    await setOrigin(tx, record.id, { forkOf: null, lineage: [], installedFrom });
    const at = new Date();
    await countInstall(tx, id, p.workspaceId, at, popularityWeight(at));
    return { copyId: record.id, created: true, slugTaken: slug === published.slug ? undefined : published.slug };
  };

  return {
    async searchMarketplace(req, ctx) {
      agentPrincipal(ctx);
      const started = performance.now();
      const q = parseOrThrow(searchRules, req);
      const sort = sortNames.get(req.sort);
      if (sort === undefined) throw invalidRequest("sort", "enum", "must be one of popular, new");
      const limit = q.limit ?? marketplaceLimits.defaultLimit;
      const tags = q.tags.length > 0 ? [...new Set(q.tags)] : null;
      const token = pageToken.decode(req.pageToken);

      if (q.query === undefined) {
        if (token && (!("sort" in token) || token.sort !== sort)) throw invalidRequest("pageToken", "format", "belongs to another search");
        const rows = await browseListed(db, sort, tags, req.verifiedOnly, token as BrowseCursor | null, limit + 1);
        const page = rows.slice(0, limit);
        const last = page.at(-1);
        const next: BrowseCursor | undefined =
          rows.length > limit && last
            ? sort === "popular"
              ? { sort, popularity: last.popularity, id: last.id }
              : { sort, publishedAt: last.firstPublishedAt.toISOString(), id: last.id }
            : undefined;
        return { skills: page.map((s) => summaryMessage(s)), nextPageToken: next && pageToken.encode(next) };
      }

      if (req.sort !== MarketplaceSort.UNSPECIFIED) throw invalidRequest("sort", "with_query", "orders browsing only; a query is ranked by relevance");
      if (token && !("kind" in token)) throw invalidRequest("pageToken", "format", "belongs to another search");
      const offset = token?.kind === "query" ? token.offset : 0;
      const wanted = Math.min(offset + limit + 1, marketplaceLimits.maxQueryResults);
      const result = await rankSkillCandidates(
        { index: opts.index, embedQuery: opts.embedQuery },
        { query: q.query, limit: wanted, mode: "hybrid", filter: { marketplace: true, states: ["active"], ...(tags ? { tags } : {}) } },
        (ids) => listedSummaries(db, ids, tags, req.verifiedOnly),
      );
      const page = result.hits.slice(offset, offset + limit);
      const more = result.hits.length > offset + limit && offset + limit < marketplaceLimits.maxQueryResults;
      return {
        skills: page.map((h) => summaryMessage(h.item, h.score)),
        nextPageToken: more ? pageToken.encode({ kind: "query", offset: offset + limit }) : undefined,
        meta: { embedMs: result.embedMs, searchMs: result.searchMs, totalMs: performance.now() - started },
      };
    },

    async getMarketplaceSkill(req, ctx) {
      const p = agentPrincipal(ctx);
      const byId = req.id !== undefined && req.id !== "";
      const bySlug = (req.slug ?? "") !== "" || (req.authorHandle ?? "") !== "";
      if (byId === bySlug) throw invalidRequest("id", "one_of", "give id, or slug and authorHandle");
      if (bySlug && !req.slug) throw invalidRequest("slug", "required", "is required with authorHandle");
      if (bySlug && !req.authorHandle) throw invalidRequest("authorHandle", "required", "is required with slug");
      // Slugs and handles are stored lowercase (their rule), so a name typed in capitals still finds its skill.
      const ref = byId ? { id: req.id! } : { slug: req.slug!.toLowerCase(), authorHandle: req.authorHandle!.toLowerCase() };
      const shown = byId ? req.id! : `${req.authorHandle}/${req.slug}`;
      const wanted = versionNumber(req.version);
      const id = await findListedSkillId(db, ref);
      const listing = id === undefined ? undefined : await findListing(db, id);
      const isOwner = listing?.workspaceId === p.workspaceId;
      // Listed skills for everyone; a removed or held one for its owner only, so they can see what to appeal or fix.
      if (!listing || !(listing.status === "listed" || (isOwner && (listing.status === "removed" || listing.status === "held")))) {
        throw notFound("marketplace skill", shown);
      }
      const answer = await db.transaction(async (tx) => {
        const listed = await listedVersion(tx, listing.skillId, listing.version, listing.publishedAt);
        const version = wanted === undefined ? listed : await findVersion(tx, listing.skillId, wanted);
        if (!version || (version.review === "held" && !isOwner)) throw notFound(`version ${wanted} of marketplace skill`, shown);
        const published = (await loadSkillVersion(tx, listing.skillId, version.version))!;
        const latest = (await newestGoodVersion(tx, listing.skillId))?.version ?? listing.version;
        return { published, version, latest };
      });
      const profile = (await findProfile(db, listing.workspaceId))!;
      return { skill: marketplaceSkillMessage(answer.published, listing, profile, answer.version, answer.latest) };
    },

    async listMarketplaceVersions(req, ctx) {
      const p = agentPrincipal(ctx);
      const id = requiredId(req.id);
      const listing = await findListing(db, id);
      const isOwner = listing?.workspaceId === p.workspaceId;
      if (!listing || !(listing.status === "listed" || isOwner)) throw notFound("marketplace skill", id);
      const versions = await db.transaction(async (tx) => {
        await listedVersion(tx, id, listing.version, listing.publishedAt);
        return listVersions(tx, id, isOwner);
      });
      return { versions: versions.map(versionMessage) };
    },

    async installSkill(req, ctx) {
      const p = agentPrincipal(ctx);
      const id = requiredId(req.id);
      const version = versionNumber(req.version);
      const { copyId, created, slugTaken } = await db.transaction((tx) => install(tx, p, id, version));
      await opts.afterWrite();
      const stored = (await findSkill(db, { workspaceId: p.workspaceId, container: null }, { id: copyId }))!;
      return { skill: skillMessage(stored), created, slugTaken };
    },

    async forkSkill(req, ctx) {
      const p = agentPrincipal(ctx);
      const id = requiredId(req.id);
      const slug = req.slug === undefined || req.slug === "" ? undefined : parseOrThrow(slugRule, req.slug, "slug");
      const name = req.name === undefined ? undefined : parseOrThrow(skillFieldRules.shape.name, req.name, "name");
      const { forkId, slugTaken } = await db.transaction(async (tx) => {
        const { published, handle } = await listedSkill(tx, id);
        await ensureProfile(tx, p.workspaceId, p.workspace);
        // A slug given is the caller's choice (taken: already_exists); the original's is only a default.
        const forkSlug = slug ?? (await freeSlug(tx, p.workspaceId, published.slug));
        const record = newSkillRecord(p, { ...draftOfRecord(published), slug: forkSlug, name: name ?? published.name }, "forked", "public");
        await opts.usage.reserveSkill(tx, p, embeddedText(record));
        await insertSkill(tx, record);
        await setOrigin(tx, record.id, { forkOf: id, lineage: lineageOf(published, handle), installedFrom: null });
        const at = new Date();
        const version = await recordPublishedVersion(tx, record, at);
        await listSkill(tx, record.id, p.workspaceId, 1, at, version.review === "held" ? "held" : "listed");
        await recordPublication(tx, { skillId: record.id, version: 1, kind: "fork", termsVersion: opts.terms.version, keyId: p.keyId, at });
        await countFork(tx, id, popularityWeight(at));
        return { forkId: record.id, slugTaken: forkSlug === published.slug || slug !== undefined ? undefined : published.slug };
      });
      await opts.afterWrite();
      const fork = (await findSkill(db, { workspaceId: p.workspaceId, container: null }, { id: forkId }))!;
      return { skill: skillMessage(fork), termsVersion: opts.terms.version, slugTaken };
    },

    async reportSkill(req, ctx) {
      const p = agentPrincipal(ctx);
      const id = requiredId(req.id);
      const reason = reasonName(req.reason);
      const message = optionalText(req.message, "message");
      const listing = await findListing(db, id);
      if (listing?.status !== "listed") throw notFound("marketplace skill", id);
      const { report, created } = await fileReport(db, { id: newId("rpt"), skillId: id, workspaceId: p.workspaceId, keyId: p.keyId, reason, message, at: new Date() });
      return { report: reportMessage(report, false), created };
    },

    async appealTakedown(req, ctx) {
      const p = agentPrincipal(ctx);
      const id = requiredId(req.id);
      if (req.message.trim() === "") throw invalidRequest("message", "required", "is required: why the takedown should be reversed");
      const message = optionalText(req.message, "message")!;
      const appeal = await db.transaction(async (tx) => {
        await lockOwner(tx, p.workspaceId);
        const skill = await findSkill(tx, scopeOf(p), { id }, { files: false });
        if (!skill) throw notFound("skill", id);
        if (skill.listingStatus !== "removed") {
          throw apiError("APPEAL_CONFLICT", `skill ${id} is not removed from the marketplace: there is nothing to appeal`, { id, reason: "not_removed" });
        }
        const pending = await pendingAppealOf(tx, p.workspaceId);
        if (pending) {
          throw apiError("APPEAL_CONFLICT", `appeal ${pending.id} of this workspace is still pending: one appeal at a time`, {
            id,
            reason: "appeal_pending",
            pendingAppealId: pending.id,
          });
        }
        const now = new Date();
        const retryAfter = appealRetryAfterSeconds(await appealTimesSince(tx, p.workspaceId, new Date(now.getTime() - appealWindowMs)), now);
        if (retryAfter !== null) {
          throw withHeaders(
            apiError("rate_limited", `at most ${marketplaceLimits.appealsPerDay} appeals in 24 hours`, { limit: "appeals", retryAfter: String(retryAfter) }),
            [["retry-after", String(retryAfter)]],
          );
        }
        return insertAppeal(tx, { id: newId("apl"), skillId: id, workspaceId: p.workspaceId, keyId: p.keyId, message, at: now });
      });
      return { appeal: appealMessage(appeal, false) };
    },

    async getMarketplaceTerms(_req, ctx) {
      agentPrincipal(ctx);
      return { version: opts.terms.version, content: opts.terms.content };
    },
  };
}
