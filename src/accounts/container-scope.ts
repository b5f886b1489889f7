import { apiError, invalidRequest } from "../errors/api-error.js";
import type { AgentPrincipal } from "./principal.js";

// Pure scoping policy. A container-scoped key reads memories that include its container and
// writes only memories that live in its container alone; a workspace-level key sees all.

/** What storage queries filter by: the workspace, and the one container when the key is scoped. */
export interface Scope {
  workspaceId: string;
  container: string | null;
}

export const scopeOf = (p: AgentPrincipal): Scope => ({ workspaceId: p.workspaceId, container: p.container });

/** The containers a write lands in: the requested ones, or the key's own container by default. */
export function writeContainers(p: AgentPrincipal, requested: readonly string[], field: string): string[] {
  if (requested.length === 0) {
    if (p.container === null) {
      throw invalidRequest(field, "required", "is required with a workspace-level key");
    }
    return [p.container];
  }
  assertMayWrite(p, requested);
  return [...new Set(requested)];
}

/** The first of these containers the key may not write, if any. */
const containerOutside = (p: AgentPrincipal, containers: readonly string[]): string | undefined =>
  p.container === null ? undefined : containers.find((c) => c !== p.container);

/** Whether the key may write (change, shadow or delete) a memory living in these containers. */
export const mayWrite = (p: AgentPrincipal, containers: readonly string[]): boolean => containerOutside(p, containers) === undefined;

export function assertMayWrite(p: AgentPrincipal, containers: readonly string[]): void {
  const outside = containerOutside(p, containers);
  if (outside !== undefined) {
    throw apiError("forbidden", `this key is scoped to container ${p.container} and cannot use ${outside}`, {
      container: outside,
    });
  }
}
