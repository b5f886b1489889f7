import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { type AdminService, ApiKeySchema } from "../../gen/agent/v1/admin_pb.js";
import type { Database } from "../db/database.js";
import { invalidRequest, notFound } from "../errors/api-error.js";
import { newId } from "../ids.js";
import { containerName, isoInstant, parseOrThrow, workspaceName } from "../validation.js";
import { z } from "zod";
import type { Authenticator } from "./authenticator.js";
import { displayPrefix, hashSecret, newKeySecret } from "./key-secret.js";
import { ensureWorkspace, insertKey, listKeys, revokeKey, rotateKey, type KeyRow } from "./key-store.js";

const createKeyRules = z.object({
  workspace: workspaceName.optional(),
  container: containerName.optional(),
  admin: z.boolean(),
  name: z.string().max(200),
  expiresAt: isoInstant.optional(),
});

const iso = (d: Date | null) => d?.toISOString();

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

export function adminService(db: Database, auth: Authenticator): ServiceImpl<typeof AdminService> {
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
  };
}
