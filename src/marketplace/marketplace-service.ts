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
import { findSkill, insertSkill, loadSkillVersion, saveSkillVersion, type SkillRecord } from "../skills/skill-store.js";
import { embeddedText } from "../skills/skill-text.js";
import { withHeaders } from "../usage/admission.js";
import type { UsageMeter } from "../usage/usage-meter.js";
import { parseOrThrow } from "../validation.js";
import { ensureProfile, findProfile } from "./author-profiles.js";
import { marketplaceSkillMessage, reportMessage, appealMessage, summaryMessage } from "./marketplace-message.js";
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
  installedCopyId,
  listedSummaries,
  listSkill,
  recordPublication,
  setInstalledVersion,
  setOrigin,
  type BrowseCursor,
  type Listing,
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

export function marketplaceService(db: Database, opts: MarketplaceServiceOptions): ServiceImpl<typeof MarketplaceService> {
  /** A listed skill, held for the transaction (its counters change); not_found for anything else. */
  const listedSkill = async (tx: Sql, id: string): Promise<{ listing: Listing; published: SkillRecord; handle: string }> => {
    const listing = await findListing(tx, id, { forUpdate: true });
    const published = listing?.status === "listed" ? await loadSkillVersion(tx, id, listing.version) : undefined;
    if (!listing || !published) throw notFound("marketplace skill", id);
    const profile = await findProfile(tx, listing.workspaceId);
    return { listing, published, handle: profile!.handle };
  };

  /** Installs or refreshes the workspace's copy; the caller's key must be able to write it. */
  const install = async (tx: Sql, p: AgentPrincipal, id: string): Promise<{ copy: SkillRecord; created: boolean }> => {
    const { listing, published } = await listedSkill(tx, id);
    const copyId = await installedCopyId(tx, p.workspaceId, id);
    const workspaceScope = { workspaceId: p.workspaceId, container: null };
    if (copyId !== undefined) {
      const current = (await findSkill(tx, workspaceScope, { id: copyId }, { forUpdate: true }))!;
      assertMayWriteSkill(p, current.containers);
      if (current.installedFrom?.version === listing.version) return { copy: current, created: false };
      const next: SkillRecord = {
        ...current,
        ...draftOfRecord(published),
        containers: current.containers,
        version: current.version + 1,
        keyId: p.keyId,
        updatedAt: new Date(),
        installedFrom: { id, version: listing.version },
      };
      await opts.usage.chargeReembedding(tx, p, embeddedText(current), embeddedText(next));
      await saveSkillVersion(tx, next);
      await setInstalledVersion(tx, copyId, listing.version);
      return { copy: next, created: false };
    }
    const record = newSkillRecord(p, draftOfRecord(published), "installed");
    await opts.usage.reserveSkill(tx, p, embeddedText(record));
    await insertSkill(tx, record);
    const origin = { forkOf: null, lineage: [], installedFrom: { id, version: listing.version } };
    await setOrigin(tx, record.id, origin);
    const at = new Date();
    await countInstall(tx, id, p.workspaceId, at, popularityWeight(at));
    return { copy: { ...record, ...origin }, created: true };
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
        const rows = await browseListed(db, sort, tags, token as BrowseCursor | null, limit + 1);
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
        (ids) => listedSummaries(db, ids, tags),
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
      const id = await findListedSkillId(db, ref);
      const listing = id === undefined ? undefined : await findListing(db, id);
      // Listed skills for everyone; a removed one for its owner only, so they can see what to appeal.
      const visible = listing && (listing.status === "listed" || (listing.status === "removed" && listing.workspaceId === p.workspaceId));
      const published = visible ? await loadSkillVersion(db, listing.skillId, listing.version) : undefined;
      if (!listing || !published) throw notFound("marketplace skill", shown);
      const profile = await findProfile(db, listing.workspaceId);
      return { skill: marketplaceSkillMessage(published, listing, profile!.handle) };
    },

    async installSkill(req, ctx) {
      const p = agentPrincipal(ctx);
      const id = requiredId(req.id);
      const { copy, created } = await db.transaction((tx) => install(tx, p, id));
      await opts.afterWrite();
      const stored = (await findSkill(db, { workspaceId: p.workspaceId, container: null }, { id: copy.id }))!;
      return { skill: skillMessage(stored), created };
    },

    async forkSkill(req, ctx) {
      const p = agentPrincipal(ctx);
      const id = requiredId(req.id);
      const slug = req.slug === undefined || req.slug === "" ? undefined : parseOrThrow(slugRule, req.slug, "slug");
      const name = req.name === undefined ? undefined : parseOrThrow(skillFieldRules.shape.name, req.name, "name");
      const forkId = await db.transaction(async (tx) => {
        const { published, handle } = await listedSkill(tx, id);
        await ensureProfile(tx, p.workspaceId, p.workspace);
        const record = newSkillRecord(p, { ...draftOfRecord(published), slug: slug ?? published.slug, name: name ?? published.name }, "forked", "public");
        await opts.usage.reserveSkill(tx, p, embeddedText(record));
        await insertSkill(tx, record);
        await setOrigin(tx, record.id, { forkOf: id, lineage: lineageOf(published, handle), installedFrom: null });
        const at = new Date();
        await listSkill(tx, record.id, p.workspaceId, 1, at);
        await recordPublication(tx, { skillId: record.id, version: 1, kind: "fork", termsVersion: opts.terms.version, keyId: p.keyId, at });
        await countFork(tx, id, popularityWeight(at));
        return record.id;
      });
      await opts.afterWrite();
      const fork = (await findSkill(db, { workspaceId: p.workspaceId, container: null }, { id: forkId }))!;
      return { skill: skillMessage(fork), termsVersion: opts.terms.version };
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
