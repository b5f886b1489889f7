import { createHash } from "node:crypto";
import type { ScannedFile } from "./safety-scan.js";
import { skillDigest, type DigestEntry } from "./skill-digest.js";
import { carriedKeys, writeSkillMd } from "./skill-md.js";
import type { ImportedSkillMd, SkillDraft, StoredFile } from "./skill-rules.js";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/**
 * The SKILL.md that export writes for a version: the file it was imported from, byte for byte, while its
 * fields still render as they did at import; otherwise the fields written out.
 */
export function exportedSkillMd(s: Omit<SkillDraft, "containers" | "files">): string {
  const rendered = renderedSkillMd(s);
  return s.importedMd && sha256(rendered) === s.importedMd.renderedSha256 ? s.importedMd.text : rendered;
}

/** What a version keeps of the SKILL.md it was imported from (its fields as stored). */
export const importedSkillMd = (s: Omit<SkillDraft, "containers" | "files">, text: string): ImportedSkillMd => ({
  text,
  renderedSha256: sha256(renderedSkillMd(s)),
});

/** SKILL.md written from a version's fields: fields SKILL.md has no place for ride in metadata. */
function renderedSkillMd(s: Omit<SkillDraft, "containers" | "files">): string {
  const metadata = { ...s.metadata };
  if (s.name !== s.slug) metadata[carriedKeys.name] = s.name;
  if (s.maturity !== "experimental") metadata[carriedKeys.maturity] = s.maturity;
  if (s.tags.length > 0) metadata[carriedKeys.tags] = JSON.stringify(s.tags);
  return writeSkillMd({
    slug: s.slug,
    description: s.description,
    license: s.license,
    compatibility: s.compatibility,
    allowedTools: s.allowedTools,
    metadata,
    extra: s.extraFrontmatter,
    body: s.content,
  });
}

/** A stored file's bytes: UTF-8 text, or the decoded base64. */
export const fileBytes = (f: StoredFile): Buffer => (f.text !== undefined ? Buffer.from(f.text, "utf8") : Buffer.from(f.base64!, "base64"));

/** The exported directory of a version as digest entries: SKILL.md and every bundled file. */
export const exportedEntries = (s: Omit<SkillDraft, "containers">): DigestEntry[] => [
  { path: "SKILL.md", bytes: Buffer.from(exportedSkillMd(s), "utf8") },
  ...s.files.map((f) => ({ path: f.path, bytes: fileBytes(f) })),
];

/** The version's digest (docs/reference/skill-digest.md). */
export const versionDigest = (s: Omit<SkillDraft, "containers">): string => skillDigest(exportedEntries(s));

/** What the safety scan reads: the exported SKILL.md (so lines match the file) and the text files. */
export const scannedFiles = (s: Omit<SkillDraft, "containers">): ScannedFile[] => [
  { path: "SKILL.md", text: exportedSkillMd(s) },
  ...s.files.map((f) => ({ path: f.path, text: f.text })),
];
