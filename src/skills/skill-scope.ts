import { assertMayWrite } from "../accounts/container-scope.js";
import type { AgentPrincipal } from "../accounts/principal.js";
import { apiError } from "../errors/api-error.js";

// Pure scoping policy for skills, the memory rules plus workspace-wide skills (no containers):
// every key of the workspace sees them; only a workspace-level key writes them.

/** The containers a new skill lands in: the requested ones, the key's own, or workspace-wide. */
export function skillContainers(p: AgentPrincipal, requested: readonly string[]): string[] {
  if (requested.length === 0) return p.container === null ? [] : [p.container];
  assertMayWrite(p, requested);
  return [...new Set(requested)];
}

/** A container-scoped key writes only skills that live in its container alone. */
export function assertMayWriteSkill(p: AgentPrincipal, containers: readonly string[]): void {
  if (p.container !== null && containers.length === 0) {
    throw apiError("forbidden", `this key is scoped to container ${p.container} and cannot change a workspace-wide skill`, {
      container: "*",
    });
  }
  assertMayWrite(p, containers);
}

/** The containers a search or list may filter on: a scoped key may name only its own. */
export function readableContainers(p: AgentPrincipal, requested: readonly string[]): string[] | null {
  if (requested.length === 0) return null;
  // The write rule is the same rule: a scoped key names no container but its own.
  assertMayWrite(p, requested);
  return [...new Set(requested)];
}
