import { createContextKey, type HandlerContext } from "@connectrpc/connect";
import { apiError } from "../errors/api-error.js";
import type { RateOverride } from "../usage/plans.js";

/** Who is calling, derived from the API key only (never from the request body). */
export interface Principal {
  keyId: string;
  role: "agent" | "admin";
  /** Null for admin keys. */
  workspaceId: string | null;
  workspace: string | null;
  /** The one container of a container-scoped key; null for a workspace-level key. */
  container: string | null;
  /** The workspace's plan name; null for the default plan (and for admin keys). */
  plan: string | null;
  /** Per-key rate limits set by an admin, applied when the plan allows overrides. */
  rateOverride: RateOverride | null;
}

/** A principal that belongs to a workspace: every agent key. */
export type AgentPrincipal = Principal & { role: "agent"; workspaceId: string; workspace: string };

export const principalKey = createContextKey<Principal | undefined>(undefined, { description: "principal" });

export function agentPrincipal(ctx: HandlerContext): AgentPrincipal {
  const p = ctx.values.get(principalKey);
  if (!p || p.role !== "agent" || p.workspaceId === null) {
    throw apiError("forbidden", "this operation needs a workspace API key");
  }
  return p as AgentPrincipal;
}
