import type { SkillRecord } from "../skills/skill-store.js";
import { fileBytes } from "../skills/skill-export.js";
import { unifiedDiff } from "../skills/unified-diff.js";

// What moving an installed copy from one published version to another changes: the frontmatter fields
// that differ (as JSON text) and a unified diff of the SKILL.md body and the bundled files.

export interface FieldChange {
  field: string;
  before: string;
  after: string;
}

const frontmatterFields = ["slug", "name", "description", "license", "compatibility", "allowedTools", "metadata", "tags", "maturity", "extraFrontmatter"] as const;

export function fieldChanges(before: SkillRecord, after: SkillRecord): FieldChange[] {
  return frontmatterFields.flatMap((field) => {
    const a = JSON.stringify(before[field] ?? null);
    const b = JSON.stringify(after[field] ?? null);
    return a === b ? [] : [{ field, before: a, after: b }];
  });
}

/** The body as SKILL.md, then each bundled file by path; binary files are named, not shown. */
export function contentDiff(before: SkillRecord, after: SkillRecord): string {
  const parts = [unifiedDiff("SKILL.md", before.content, after.content)];
  const a = new Map(before.files.map((f) => [f.path, f]));
  const b = new Map(after.files.map((f) => [f.path, f]));
  for (const path of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const fa = a.get(path);
    const fb = b.get(path);
    if (fa?.text !== undefined || fb?.text !== undefined) {
      if (fa?.base64 === undefined && fb?.base64 === undefined) {
        parts.push(unifiedDiff(path, fa?.text ?? "", fb?.text ?? ""));
        continue;
      }
    }
    if (!fa || !fb || !fileBytes(fa).equals(fileBytes(fb))) parts.push(`Binary files ${fa ? `a/${path}` : "/dev/null"} and ${fb ? `b/${path}` : "/dev/null"} differ\n`);
  }
  return parts.join("");
}
