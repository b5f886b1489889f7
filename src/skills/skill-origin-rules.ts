import { apiError } from "../errors/api-error.js";
import type { SkillOrigin } from "./skill-store.js";

// Pure rules for skills that came from the marketplace: an installed copy is read-only (installing again
// updates it), and a fork keeps its original's licence and can never leave the marketplace (copyleft).

/** Update, import and deprecate refuse an installed copy. */
export function assertNotInstalledCopy(s: { id: string } & Pick<SkillOrigin, "installedFrom">): void {
  if (s.installedFrom === null) return;
  throw apiError(
    "forbidden",
    `skill ${s.id} is a read-only installed copy of ${s.installedFrom.id}; install it again to update it, or fork it to change it`,
    { id: s.id, reason: "read_only", installedFrom: s.installedFrom.id },
  );
}

/** A fork keeps the licence it was forked with. */
export function assertForkKeepsLicense(s: { id: string; source: string; license: string | null }, nextLicense: string | null): void {
  if (s.source === "forked" && nextLicense !== s.license) {
    throw apiError("COPYLEFT_LOCKED", `skill ${s.id} is a fork and keeps its original's licence`, { id: s.id, field: "license" });
  }
}

/** Unpublish, deprecate (and so making private) refuse a fork. */
export function assertNotFork(s: { id: string; source: string }, action: "unpublished" | "deprecated"): void {
  if (s.source === "forked") {
    throw apiError("COPYLEFT_LOCKED", `skill ${s.id} is a fork: forks stay public and cannot be ${action}`, { id: s.id });
  }
}
