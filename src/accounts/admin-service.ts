import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { type AdminService, ApiKeySchema, type WorkspacePlanSchema } from "../../gen/agent/v1/admin_pb.js";
import type { Database } from "../db/database.js";
import { invalidRequest, notFound } from "../errors/api-error.js";
import { newId } from "../ids.js";
import { type Plan, type PlanCatalog, rateFields, rateLimitsSchema } from "../usage/plans.js";
import { planLimitsMessage, rateLimitsMessage } from "../usage/stats-service.js";
import { containerName, isoInstant, oneLine, parseOrThrow, workspaceName } from "../validation.js";
import { z } from "zod";
import { setProfile } from "../marketplace/author-profiles.js";
import { authorEmail } from "../marketplace/marketplace-rules.js";
import { slugRule } from "../skills/skill-rules.js";
import type { Authenticator } from "./authenticator.js";
import { listWorkspaces } from "./workspace-list.js";
import { displayPrefix, hashSecret, newKeySecret } from "./key-secret.js";
import {
  ensureWorkspace,
  findKey,
  insertKey,
  listKeys,
  revokeKey,
  rotateKey,
  setKeyRateLimits,
  setWorkspacePlan,
  type KeyRow,
} from "./key-store.js";

const createKeyRules = z.object({
  workspace: workspaceName.optional(),
  container: containerName.optional(),
  admin: z.boolean(),
  name: oneLine(z.string().max(200)),
  expiresAt: isoInstant.optional(),
});

const iso = (d: Date | null) => d?.toISOString();

const workspacePageRules = z.object({
  pageSize: z.number().int().min(1, "must be between 1 and 200").max(200, "must be between 1 and 200").optional(),
  pageToken: z.string(),
});

// Page tokens are the last workspace name of the previous page.
function decodeWorkspaceToken(token: string): string | null {
  if (token === "") return null;
  const name = Buffer.from(token, "base64url").toString();
  if (!workspaceName.safeParse(name).success) throw invalidRequest("pageToken", "format", "is not a token returned by a previous page");
  return name;
}

/** An override's given fields, each checked like a plan's; the merged limits are checked again below. */
const rateOverrideRules = z.object(rateFields).partial();

function workspacePlanMessage(workspace: string, plan: Plan): MessageInitShape<typeof WorkspacePlanSchema> {
  return { workspace, plan: plan.name, limits: planLimitsMessage(plan), rateLimits: rateLimitsMessage(plan, null) };
}

function apiKeyOf(row: KeyRow): MessageInitShape<typeof ApiKeySchema> {
  return {
    id: row.id,
    workspace: row.workspace ?? undefined,
    container: row.container ?? undefined,
    role: row.role,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.created_at.toISOString(),
    expiresAt: iso(row.expires_at),
    revokedAt: iso(row.revoked_at),
    lastRotatedAt: iso(row.last_rotated_at),
  };
}

export function adminService(db: Database, auth: Authenticator, plans: PlanCatalog): ServiceImpl<typeof AdminService> {
  return {
    async createKey(req) {
      const input = parseOrThrow(createKeyRules, { ...req, workspace: req.workspace || undefined });
      if (input.admin && (input.workspace || input.container)) {
        throw invalidRequest("admin", "exclusive", "an admin key has no workspace or container");
      }
      const workspace = input.admin ? null : input.workspace;
      if (workspace === undefined) throw invalidRequest("workspace", "required", "is required unless admin is true");
      if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) {
        throw invalidRequest("expiresAt", "future", "must be in the future");
      }
      const secret = newKeySecret();
      const row = await db.transaction(async (tx) => {
        const workspaceId = workspace === null ? null : await ensureWorkspace(tx, newId("ws"), workspace);
        return insertKey(tx, {
          id: newId("key"),
          workspaceId,
          container: input.container ?? null,
          role: input.admin ? "admin" : "agent",
          name: input.name,
          secretHash: hashSecret(secret),
          prefix: displayPrefix(secret),
          expiresAt: input.expiresAt ?? null,
        });
      });
      return {
        key: secret,
        id: row.id,
        workspace: row.workspace ?? undefined,
        container: row.container ?? undefined,
        role: row.role,
        createdAt: row.created_at.toISOString(),
        expiresAt: iso(row.expires_at),
      };
    },

    async listKeys(req) {
      const rows = await listKeys(db, req.workspace || null, req.includeRevoked);
      return { keys: rows.map(apiKeyOf) };
    },

    async rotateKey(req) {
      const secret = newKeySecret();
      const row = await rotateKey(db, req.id, hashSecret(secret), displayPrefix(secret));
      if (!row) throw notFound("active key", req.id);
      auth.forget(row.id);
      return { key: secret, apiKey: apiKeyOf(row) };
    },

    async revokeKey(req) {
      const row = await revokeKey(db, req.id);
      if (!row) throw notFound("key", req.id);
      auth.forget(row.id);
      return apiKeyOf(row);
    },

    async setWorkspacePlan(req) {
      const workspace = parseOrThrow(workspaceName, req.workspace, "workspace");
      const plan = plans.byName.get(req.plan);
      if (!plan) throw invalidRequest("plan", "enum", `must be one of ${[...plans.byName.keys()].join(", ")}`);
      await setWorkspacePlan(db, newId("ws"), workspace, plan.name);
      auth.forgetWorkspace(workspace);
      return workspacePlanMessage(workspace, plan);
    },

    async setKeyRateLimits(req) {
      const { id, ...fields } = req;
      const override = Object.fromEntries(Object.entries(parseOrThrow(rateOverrideRules, fields)).filter(([, v]) => v !== undefined));
      const key = await findKey(db, id);
      if (!key || key.revoked_at) throw notFound("active key", id);
      const plan = plans.planOf(key.plan);
      if (key.role !== "agent" || !plan.keyRateOverrides) {
        throw invalidRequest("id", "plan", `the key's plan (${key.role === "agent" ? plan.name : "admin key"}) does not allow per-key rate limits`);
      }
      const empty = Object.keys(override).length === 0;
      parseOrThrow(rateLimitsSchema, { ...plan.rate, ...override });
      const row = await setKeyRateLimits(db, id, empty ? null : override);
      if (!row) throw notFound("key", id);
      auth.forget(id);
      return { id, rateLimits: rateLimitsMessage(plan, row.rate_limits) };
    },

    async listWorkspaces(req) {
      const page = parseOrThrow(workspacePageRules, { pageSize: req.pageSize, pageToken: req.pageToken });
      const limit = page.pageSize ?? 50;
      const rows = await listWorkspaces(db, decodeWorkspaceToken(page.pageToken), limit + 1);
      const shown = rows.slice(0, limit);
      return {
        workspaces: shown.map((w) => ({
          workspace: w.name,
          plan: plans.planOf(w.plan).name,
          defaultPlan: w.plan === null || !plans.byName.has(w.plan),
          authorHandle: w.handle ?? undefined,
          email: w.email ?? undefined,
          createdAt: w.created_at.toISOString(),
          memoriesStored: Number(w.memories_stored ?? 0),
          skillsStored: Number(w.skills_stored ?? 0),
        })),
        nextPageToken: rows.length > limit ? Buffer.from(shown.at(-1)!.name).toString("base64url") : undefined,
      };
    },

    async setAuthorProfile(req) {
      const workspace = parseOrThrow(workspaceName, req.workspace, "workspace");
      const handle = req.authorHandle === undefined ? undefined : parseOrThrow(slugRule, req.authorHandle, "authorHandle");
      const email = req.email === undefined ? undefined : req.email === "" ? null : parseOrThrow(authorEmail, req.email, "email");
      const profile = await db.transaction(async (tx) => {
        const workspaceId = await ensureWorkspace(tx, newId("ws"), workspace);
        return setProfile(tx, workspaceId, workspace, { handle, email, verified: req.verified });
      });
      return { workspace: profile.workspace, authorHandle: profile.handle, email: profile.email ?? undefined, verified: profile.verified };
    },
  };
}
