import type { ServiceImpl } from "@connectrpc/connect";
import { z } from "zod";
import { SearchMode } from "../../gen/agent/v1/recall_pb.js";
import type { SkillService, UpdateSkillRequest } from "../../gen/agent/v1/skill_pb.js";
import { scopeOf } from "../accounts/container-scope.js";
import { agentPrincipal, type AgentPrincipal } from "../accounts/principal.js";
import type { Database, Sql } from "../db/database.js";
import { apiError, invalidRequest, notFound } from "../errors/api-error.js";
import type { SkillVectorIndex } from "../search/skills/skill-vector-index.js";
import type { UsageMeter } from "../usage/usage-meter.js";
import { containerName, parseOrThrow } from "../validation.js";
import { importSkillMd } from "./skill-import.js";
import { scanSkill, type ScanFinding } from "./safety-scan.js";
import { exportedSkillMd, importedSkillMd, scannedFiles } from "./skill-export.js";
import { findingMessage, skillMessage } from "./skill-message.js";
import {
  draftOf,
  fieldsToUpdate,
  fileMessages,
  maturities,
  skillFieldRules,
  skillLimits,
  skillQueryLimits,
  sources,
  visibilities,
  type SkillFieldInput,
  type UpdatableField,
} from "./skill-rules.js";
import { assertMayWriteSkill, readableContainers, skillContainers } from "./skill-scope.js";
import { searchSkills } from "./skill-search.js";
import {
  deprecateSkill,
  findSkill,
  findSkillVersion,
  insertSkill,
  listSkills,
  saveSkillVersion,
  type SkillQueryFilter,
  type SkillRecord,
  type SkillRef,
} from "./skill-store.js";
import { embeddedText } from "./skill-text.js";
import { newSkillRecord } from "./new-skill.js";
import { minSimilarityOf } from "./skill-scoring.js";
import { assertForkKeepsLicense, assertNotFork, assertNotInstalledCopy } from "./skill-origin-rules.js";

/** What the skills need from the marketplace (src/marketplace/publishing.ts). */
export interface SkillPublishing {
  publish(p: AgentPrincipal, ref: SkillRef): Promise<{ skill: SkillRecord; termsVersion: string; version: PublishedVersionInfo }>;
  unpublish(p: AgentPrincipal, ref: SkillRef): Promise<SkillRecord>;
  /** In the transaction of a new version: a listed skill publishes it. */
  publishNewVersion(tx: Sql, p: AgentPrincipal, next: SkillRecord): Promise<void>;
  /** Withdraws a published version of the caller's skill. */
  yank(p: AgentPrincipal, ref: SkillRef, version: number, reason: string): Promise<{ version: number; yank: { reason: string; at: Date }; installedCopies: number }>;
  /** Moves an installed copy to another published version (or only tells what would change). */
  upgrade(p: AgentPrincipal, ref: SkillRef, version: number | undefined, dryRun: boolean): Promise<SkillUpgrade>;
}

/** A published version as publish answers it. */
export interface PublishedVersionInfo {
  version: number;
  digest: string;
  review: string;
  findings: ScanFinding[];
}

export interface SkillUpgrade {
  skill: SkillRecord;
  from: { version: number; digest: string };
  to: { version: number; digest: string };
  changes: Array<{ field: string; before: string; after: string }>;
  diff: string;
  applied: boolean;
}

export interface SkillServiceOptions {
  index: SkillVectorIndex;
  embedQuery(text: string): Promise<Float32Array>;
  usage: UsageMeter;
  publishing: SkillPublishing;
  /** Runs after every committed write and resolves once the skill is searchable (or queued for retry). */
  afterWrite: () => Promise<void>;
}

/** A skill named by id or slug: exactly one of them. */
export function refOf(req: { id?: string; slug?: string }): SkillRef {
  if (req.id !== undefined && req.slug !== undefined) throw invalidRequest("slug", "one_of", "give id or slug, not both");
  if (req.id !== undefined && req.id !== "") return { id: req.id };
  if (req.slug !== undefined && req.slug !== "") return { slug: req.slug };
  throw invalidRequest("id", "required", "id or slug is required");
}

export const refText = (ref: SkillRef) => ("id" in ref ? ref.id : ref.slug);

function versionOf(version: number | undefined): number | undefined {
  if (version !== undefined && version < 1) throw invalidRequest("version", "min", "must be at least 1");
  return version;
}

/** A stored version seen as writable fields, so an update is validated exactly like a create. */
const fieldsOf = (s: SkillRecord): SkillFieldInput => ({
  slug: s.slug,
  name: s.name,
  description: s.description,
  content: s.content,
  tags: s.tags,
  containers: s.containers,
  maturity: maturities.byName.get(s.maturity)!,
  license: s.license ?? undefined,
  compatibility: s.compatibility ?? undefined,
  allowedTools: s.allowedTools,
  metadata: s.metadata,
  files: fileMessages(s.files),
});

function isSet(req: UpdateSkillRequest, f: UpdatableField): boolean {
  const v = req[f];
  if (Array.isArray(v)) return v.length > 0;
  if (f === "metadata") return Object.keys(req.metadata).length > 0;
  if (f === "maturity") return req.maturity !== 0;
  return v !== undefined;
}

const enumList = (values: readonly number[], names: { byNumber: Map<number, string>; list: string }, field: string): string[] | null => {
  if (values.length === 0) return null;
  return values.map((n, i) => {
    const name = names.byNumber.get(n);
    if (name === undefined) throw invalidRequest(`${field}[${i}]`, "enum", `must be one of ${names.list}`);
    return name;
  });
};

const tagFilter = z.array(z.string().min(1, "must not be empty").max(skillLimits.tagChars)).max(skillLimits.tags);
const containerFilter = z.array(containerName).max(skillLimits.containers);

const searchRules = z.object({
  query: z
    .string()
    .max(skillQueryLimits.queryChars, `must be at most ${skillQueryLimits.queryChars} characters`)
    .refine((s) => s.trim().length > 0, { message: "is required", params: { rule: "required" } }),
  limit: z.number().int().min(1, "must be 1 to 100").max(skillQueryLimits.maxLimit, "must be 1 to 100").optional(),
  tags: tagFilter,
  containers: containerFilter,
  minSimilarity: z.number().min(0, "must be 0 to 1").max(1, "must be 0 to 1").optional(),
});

const modes = new Map<number, "semantic" | "keyword" | "hybrid">([
  [SearchMode.UNSPECIFIED, "hybrid"],
  [SearchMode.SEMANTIC, "semantic"],
  [SearchMode.KEYWORD, "keyword"],
  [SearchMode.HYBRID, "hybrid"],
]);

const pageToken = {
  encode: (id: string) => Buffer.from(id).toString("base64url"),
  decode(token: string): string | null {
    if (token === "") return null;
    const id = Buffer.from(token, "base64url").toString();
    if (!/^skl_[0-9a-z]{26}$/.test(id)) throw invalidRequest("pageToken", "format", "is not a token from a previous page");
    return id;
  },
};

export function skillService(db: Database, opts: SkillServiceOptions): ServiceImpl<typeof SkillService> {
  const create = async (p: AgentPrincipal, record: SkillRecord) => {
    await db.transaction(async (tx) => {
      await opts.usage.reserveSkill(tx, p, embeddedText(record));
      await insertSkill(tx, record);
    });
  };

  const saveVersion = async (tx: Sql, p: AgentPrincipal, current: SkillRecord, next: SkillRecord) => {
    assertForkKeepsLicense(current, next.license);
    await opts.usage.chargeReembedding(tx, p, embeddedText(current), embeddedText(next));
    await saveSkillVersion(tx, next);
    await opts.publishing.publishNewVersion(tx, p, next);
  };

  return {
    async createSkill(req, ctx) {
      const principal = agentPrincipal(ctx);
      const fields = parseOrThrow(skillFieldRules, { ...req, slug: req.slug === "" ? undefined : req.slug });
      if (fields.content.trim() === "") throw invalidRequest("content", "required", "is required: the SKILL.md body");
      const record = newSkillRecord(principal, draftOf(fields, {}), "authored");
      await create(principal, record);
      await opts.afterWrite();
      return { skill: skillMessage(record) };
    },

    async getSkill(req, ctx) {
      const ref = refOf(req);
      const scope = scopeOf(agentPrincipal(ctx));
      const version = versionOf(req.version);
      const found = version === undefined ? await findSkill(db, scope, ref) : await findSkillVersion(db, scope, ref, version);
      if (!found) throw notFound(version === undefined ? "skill" : `version ${version} of skill`, refText(ref));
      return { skill: skillMessage(found) };
    },

    async searchSkills(req, ctx) {
      const started = performance.now();
      const principal = agentPrincipal(ctx);
      const q = parseOrThrow(searchRules, req);
      const mode = modes.get(req.searchMode);
      if (mode === undefined) throw invalidRequest("searchMode", "enum", "must be one of semantic, keyword, hybrid");
      const filter: SkillQueryFilter = {
        tags: q.tags.length > 0 ? [...new Set(q.tags)] : null,
        maturities: enumList(req.maturity, maturities, "maturity"),
        visibilities: null,
        containers: readableContainers(principal, q.containers),
        sources: null,
        includeDeprecated: req.includeDeprecated,
        yankedOnly: false,
      };
      const result = await searchSkills(
        { db, index: opts.index, embedQuery: opts.embedQuery },
        scopeOf(principal),
        { query: q.query, limit: q.limit ?? skillQueryLimits.defaultLimit, mode, filter },
      );
      const floor = q.minSimilarity ?? minSimilarityOf(mode);
      return {
        skills: result.hits.filter((h) => h.score >= floor).map((h) => ({ ...skillMessage(h.skill, { similarity: h.score }), files: [] })),
        meta: { embedMs: result.embedMs, searchMs: result.searchMs, totalMs: performance.now() - started },
      };
    },

    async listSkills(req, ctx) {
      const principal = agentPrincipal(ctx);
      const tags = parseOrThrow(tagFilter, req.tags, "tags");
      const containers = parseOrThrow(containerFilter, req.containers, "containers");
      const size = req.pageSize ?? skillQueryLimits.defaultPageSize;
      if (size < 1 || size > skillQueryLimits.maxPageSize) throw invalidRequest("pageSize", "range", `must be 1 to ${skillQueryLimits.maxPageSize}`);
      const filter: SkillQueryFilter = {
        tags: tags.length > 0 ? tags : null,
        maturities: enumList(req.maturity, maturities, "maturity"),
        visibilities: enumList(req.visibility, visibilities, "visibility"),
        containers: readableContainers(principal, containers),
        sources: enumList(req.source, sources, "source"),
        includeDeprecated: req.includeDeprecated,
        yankedOnly: req.yanked,
      };
      const rows = await listSkills(db, scopeOf(principal), filter, pageToken.decode(req.pageToken), size + 1);
      const page = rows.slice(0, size);
      return {
        skills: page.map((s) => ({ ...skillMessage(s), files: [] })),
        nextPageToken: rows.length > size ? pageToken.encode(page.at(-1)!.id) : undefined,
      };
    },

    async updateSkill(req, ctx) {
      const principal = agentPrincipal(ctx);
      const ref = refOf(req);
      const fields = fieldsToUpdate((f) => isSet(req, f), req.updateMask?.paths ?? []);
      if (fields.length === 0) throw invalidRequest("body", "required", "names no field to update");
      if (req.expectedVersion !== undefined && req.expectedVersion < 1) throw invalidRequest("expectedVersion", "min", "must be at least 1");
      const next = await db.transaction(async (tx) => {
        const current = await findSkill(tx, scopeOf(principal), ref, { forUpdate: true });
        if (!current) throw notFound("skill", refText(ref));
        assertMayWriteSkill(principal, current.containers);
        assertNotInstalledCopy(current);
        if (req.expectedVersion !== undefined && req.expectedVersion !== current.version) {
          throw apiError("version_conflict", `skill ${current.id} is at version ${current.version}, not ${req.expectedVersion}`, {
            field: "expectedVersion",
            currentVersion: String(current.version),
          });
        }
        const merged: SkillFieldInput = { ...fieldsOf(current) };
        for (const f of fields) (merged as Record<string, unknown>)[f] = req[f];
        const draft = draftOf(parseOrThrow(skillFieldRules, merged), current.extraFrontmatter);
        const updated: SkillRecord = {
          ...current,
          ...draft,
          containers: fields.includes("containers") ? skillContainers(principal, draft.containers) : current.containers,
          version: current.version + 1,
          keyId: principal.keyId,
          updatedAt: new Date(),
        };
        await saveVersion(tx, principal, current, updated);
        return updated;
      });
      await opts.afterWrite();
      return { skill: skillMessage(next) };
    },

    async deprecateSkill(req, ctx) {
      const principal = agentPrincipal(ctx);
      const ref = refOf(req);
      if (req.message !== undefined && req.message.length > skillLimits.deprecationMessageChars) {
        throw invalidRequest("message", "max_length", `must be at most ${skillLimits.deprecationMessageChars} characters`);
      }
      const scope = scopeOf(principal);
      const done = await db.transaction(async (tx) => {
        const current = await findSkill(tx, scope, ref, { forUpdate: true });
        if (!current) throw notFound("skill", refText(ref));
        assertMayWriteSkill(principal, current.containers);
        assertNotInstalledCopy(current);
        assertNotFork(current, "deprecated");
        let replacedBy: string | null = null;
        if (req.replacedBy !== undefined && req.replacedBy !== "") {
          const target = req.replacedBy.startsWith("skl_") ? { id: req.replacedBy } : { slug: req.replacedBy };
          const replacement = await findSkill(tx, scope, target, { files: false });
          if (!replacement) throw apiError("not_found", `skill ${req.replacedBy} does not exist`, { field: "replacedBy", id: req.replacedBy });
          if (replacement.id === current.id) throw invalidRequest("replacedBy", "not_self", "must name another skill");
          replacedBy = replacement.id;
        }
        const at = new Date();
        await deprecateSkill(tx, current.id, at, req.message ?? null, replacedBy);
        return { ...current, state: "deprecated", deprecatedAt: at, deprecationMessage: req.message ?? null, replacedBy };
      });
      await opts.afterWrite();
      return { skill: skillMessage(done) };
    },

    async importSkill(req, ctx) {
      const principal = agentPrincipal(ctx);
      const imported = importSkillMd(req.content, { files: req.files, containers: req.containers, tags: req.tags });
      const fields = draftOf(imported.fields, imported.extraFrontmatter, "frontmatter.");
      // Export gives the file back byte for byte while the version's fields are the ones it was imported with.
      const draft = { ...fields, importedMd: importedSkillMd(fields, req.content) };
      // On import the scan only warns; publishing the skill is what can hold it.
      const findings = await scanSkill(scannedFiles(draft));
      const scope = scopeOf(principal);
      const result = await db.transaction(async (tx) => {
        const existing = await findSkill(tx, scope, { slug: draft.slug }, { forUpdate: true });
        if (!existing) {
          const record = newSkillRecord(principal, draft, "imported");
          await opts.usage.reserveSkill(tx, principal, embeddedText(record));
          await insertSkill(tx, record);
          return { skill: record, created: true };
        }
        assertMayWriteSkill(principal, existing.containers);
        assertNotInstalledCopy(existing);
        // What SKILL.md does not carry stays as it was: name, maturity and tags unless carried, files unless given.
        const next: SkillRecord = {
          ...existing,
          ...draft,
          name: imported.carried.name ? draft.name : existing.name,
          maturity: imported.carried.maturity ? draft.maturity : existing.maturity,
          tags: req.tags.length > 0 || imported.carried.tags ? draft.tags : existing.tags,
          files: req.files.length > 0 ? draft.files : existing.files,
          containers: req.containers.length > 0 ? skillContainers(principal, draft.containers) : existing.containers,
          version: existing.version + 1,
          keyId: principal.keyId,
          updatedAt: new Date(),
        };
        next.importedMd = importedSkillMd(next, req.content);
        await saveVersion(tx, principal, existing, next);
        return { skill: next, created: false };
      });
      await opts.afterWrite();
      return { skill: skillMessage(result.skill), created: result.created, warnings: imported.warnings, findings: findings.map(findingMessage) };
    },

    async publishSkill(req, ctx) {
      const { skill, termsVersion, version } = await opts.publishing.publish(agentPrincipal(ctx), refOf(req));
      await opts.afterWrite();
      return {
        skill: skillMessage(skill),
        termsVersion,
        published: { version: version.version, digest: version.digest },
        findings: version.findings.map(findingMessage),
        held: version.review === "held",
      };
    },

    async yankSkill(req, ctx) {
      const done = await opts.publishing.yank(agentPrincipal(ctx), refOf(req), req.version, req.reason);
      return { version: done.version, yank: { reason: done.yank.reason, at: done.yank.at.toISOString() }, installedCopies: done.installedCopies };
    },

    async upgradeSkill(req, ctx) {
      const up = await opts.publishing.upgrade(agentPrincipal(ctx), refOf(req), versionOf(req.version), req.dryRun);
      if (up.applied) await opts.afterWrite();
      return { ...up, skill: skillMessage(up.skill) };
    },

    async unpublishSkill(req, ctx) {
      const skill = await opts.publishing.unpublish(agentPrincipal(ctx), refOf(req));
      await opts.afterWrite();
      return { skill: skillMessage(skill) };
    },

    async exportSkill(req, ctx) {
      const ref = refOf(req);
      const scope = scopeOf(agentPrincipal(ctx));
      const version = versionOf(req.version);
      const s = version === undefined ? await findSkill(db, scope, ref) : await findSkillVersion(db, scope, ref, version);
      if (!s) throw notFound(version === undefined ? "skill" : `version ${version} of skill`, refText(ref));
      return { filename: "SKILL.md", content: exportedSkillMd(s), files: fileMessages(s.files) };
    },
  };
}
