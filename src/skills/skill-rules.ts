import type { DescEnum, JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import { SkillMaturitySchema, SkillSourceSchema, SkillVisibilitySchema, type SkillFile } from "../../gen/agent/v1/skill_pb.js";
import { invalidRequest } from "../errors/api-error.js";
import { restEnumName, restEnumValues } from "../transport/rest/enum-names.js";
import { containerName, notOneLine, oneLine, oneLineIssue, oneLineMessage } from "../validation.js";
import { splitTools } from "./skill-md.js";

// Pure validation and defaults for skill fields. Enum values are stored by their REST names ("stable").

// The service's storage limits. Where the Agent Skills format sets a lower one (formatLimits), real
// files still exceed it (a vendor's own skill had a 1,068-character description), so the service stores
// what agents load and import warns.
export const skillLimits = {
  slugChars: 64,
  nameChars: 128,
  descriptionChars: 4096,
  /** The SKILL.md body, in UTF-8 bytes (real files reach 75 KB). */
  contentBytes: 262_144,
  licenseChars: 1024,
  compatibilityChars: 2048,
  tags: 32,
  tagChars: 64,
  containers: 16,
  allowedTools: 64,
  allowedToolChars: 128,
  metadataEntries: 64,
  metadataKeyChars: 128,
  metadataValueChars: 4096,
  files: 64,
  filePathChars: 255,
  /** The body and every bundled file together, in bytes (base64 decoded). */
  skillBytes: 4 * 1024 * 1024,
  deprecationMessageChars: 1024,
} as const;

/** The Agent Skills format's limits that are lower than the service's: import warns past them. */
export const formatLimits = {
  description: 1024,
  compatibility: 500,
} as const;

function enumNames(desc: DescEnum) {
  const byNumber = new Map(desc.values.filter((v) => v.number !== 0).map((v) => [v.number, restEnumName(desc, v.name)]));
  const byName = new Map([...byNumber].map(([n, name]) => [name, n]));
  return { byNumber, byName, list: restEnumValues(desc).join(", ") };
}

export const maturities = enumNames(SkillMaturitySchema);
export const visibilities = enumNames(SkillVisibilitySchema);
export const sources = enumNames(SkillSourceSchema);

/** The Agent Skills `name` rule: lowercase letters, digits and single inner hyphens. */
const slugPattern = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const slugRule = z
  .string()
  .min(1, "must not be empty")
  .max(skillLimits.slugChars, `must be at most ${skillLimits.slugChars} characters`)
  .regex(slugPattern, "must be lowercase letters, digits and hyphens, with no leading, trailing or double hyphen");

/** A slug from a display name ("PDF Tools!" -> "pdf-tools"); empty when the name has no letter or digit. */
export function slugFrom(name: string): string {
  return name
    .normalize("NFKD")
    // Accents decompose into combining marks: "é" -> "e" + U+0301, which is dropped.
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, 4 * skillLimits.slugChars)
    .replace(/^-+/, "")
    .slice(0, skillLimits.slugChars)
    .replace(/-+$/, "");
}

const notBlank = (what: string) => ({ message: `must not be blank${what}`, params: { rule: "required" } });
const utf8Bytes = (s: string) => Buffer.byteLength(s, "utf8");

export const maturityRule = z.number().transform((n, ctx) => {
  if (n === 0) return "experimental";
  const name = maturities.byNumber.get(n);
  if (name === undefined) {
    ctx.addIssue({ code: "custom", message: `must be one of ${maturities.list}`, params: { rule: "enum" } });
    return z.NEVER;
  }
  return name;
});

// One-line fields (name, tags, allowed tools, metadata keys) refuse control characters and line
// separators; the slug and containers are one line by their character sets. The description, licence,
// compatibility, metadata values and the body may span lines (YAML block scalars, the SKILL.md body).
const nameRule = oneLine(
  z
    .string({ error: "is required" })
    .max(skillLimits.nameChars, `must be at most ${skillLimits.nameChars} characters`)
    .refine((s) => s.trim().length > 0, notBlank("")),
);
const descriptionRule = z
  .string({ error: "is required" })
  .max(skillLimits.descriptionChars, `must be at most ${skillLimits.descriptionChars} characters`)
  .refine((s) => s.trim().length > 0, notBlank(""));
const contentRule = z
  .string({ error: "is required" })
  .refine((s) => utf8Bytes(s) <= skillLimits.contentBytes, {
    message: `must be at most ${skillLimits.contentBytes} bytes`,
    params: { rule: "max_size" },
  });
const tagsRule = z
  .array(oneLine(z.string().min(1, "must not be empty").max(skillLimits.tagChars, `must be at most ${skillLimits.tagChars} characters`)))
  .max(skillLimits.tags, `must have at most ${skillLimits.tags} items`);
const containersRule = z.array(containerName).max(skillLimits.containers, `must have at most ${skillLimits.containers} items`);
const licenseRule = z
  .string()
  .min(1, "must not be empty")
  .max(skillLimits.licenseChars, `must be at most ${skillLimits.licenseChars} characters`);
const compatibilityRule = z
  .string()
  .min(1, "must not be empty")
  .max(skillLimits.compatibilityChars, `must be at most ${skillLimits.compatibilityChars} characters`);
const allowedToolsRule = z
  .array(
    oneLine(z.string().max(skillLimits.allowedToolChars, `must be at most ${skillLimits.allowedToolChars} characters`))
      .refine((t) => splitTools(t).length === 1 && splitTools(t)[0] === t, {
        message: "must be one tool name: no spaces or commas outside parentheses",
        params: { rule: "tool_name" },
      }),
  )
  .max(skillLimits.allowedTools, `must have at most ${skillLimits.allowedTools} items`);
const metadataRule = z
  .record(
    z.string().min(1, "keys must not be empty").max(skillLimits.metadataKeyChars, `keys must be at most ${skillLimits.metadataKeyChars} characters`),
    z.string().max(skillLimits.metadataValueChars, `values must be at most ${skillLimits.metadataValueChars} characters`),
  )
  .refine((m) => Object.keys(m).length <= skillLimits.metadataEntries, {
    message: `must have at most ${skillLimits.metadataEntries} entries`,
    params: { rule: "max_items" },
  })
  // Checked on the record so the error names `metadata`, not a field path with the line break in it.
  .refine((m) => Object.keys(m).every((k) => !notOneLine.test(k)), oneLineIssue(`keys ${oneLineMessage}`));

/** A bundled file as stored: text, or base64 for any bytes. */
export interface StoredFile {
  path: string;
  text?: string;
  base64?: string;
}

const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A relative path of safe segments: no absolute path, backslash, control character, `.` or `..`. */
function validPath(path: string): boolean {
  if (path.length === 0 || path.length > skillLimits.filePathChars) return false;
  if (path.startsWith("/") || path.includes("\\") || /[\u0000-\u001f\u007f]/.test(path)) return false;
  return path.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..");
}

const fileRule = z
  .object({
    path: z.string().refine(validPath, {
      message: `must be a relative path of at most ${skillLimits.filePathChars} characters, / separated, without . or .. segments`,
      params: { rule: "relative_path" },
    }),
    data: z
      .object({ case: z.string().optional(), value: z.string().optional() })
      .refine((d) => (d.case === "text" || d.case === "base64") && d.value !== undefined, {
        message: "must have text or base64",
        params: { rule: "required" },
      }),
  })
  .refine((f) => f.path !== "SKILL.md", { message: "SKILL.md is the skill itself, not a bundled file", params: { rule: "reserved" }, path: ["path"] })
  .refine((f) => f.data.case !== "base64" || base64Pattern.test(f.data.value ?? ""), {
    message: "must be valid base64",
    params: { rule: "base64" },
    path: ["base64"],
  });

const filesRule = z
  .array(fileRule)
  .max(skillLimits.files, `must have at most ${skillLimits.files} items`)
  .superRefine((files, ctx) => {
    const seen = new Set<string>();
    files.forEach((f, i) => {
      if (seen.has(f.path)) ctx.addIssue({ code: "custom", message: "is given twice", params: { rule: "unique" }, path: [i, "path"] });
      seen.add(f.path);
    });
  });

/** Every field of a skill version as validated; `slug` and `containers` get their defaults later. */
export const skillFieldRules = z.object({
  slug: slugRule.optional(),
  name: nameRule,
  description: descriptionRule,
  content: contentRule,
  tags: tagsRule,
  containers: containersRule,
  maturity: maturityRule,
  license: licenseRule.optional(),
  compatibility: compatibilityRule.optional(),
  allowedTools: allowedToolsRule,
  metadata: metadataRule,
  files: filesRule,
});

export type SkillFieldInput = z.input<typeof skillFieldRules>;

/** A skill version's validated fields, before it is placed in containers and stored. */
export interface SkillDraft {
  slug: string;
  name: string;
  description: string;
  content: string;
  tags: string[];
  /** As validated: empty when the caller named none. */
  containers: string[];
  maturity: string;
  license: string | null;
  compatibility: string | null;
  allowedTools: string[];
  metadata: Record<string, string>;
  /** Frontmatter keys outside the Agent Skills specification, from import. */
  extraFrontmatter: JsonObject;
  files: StoredFile[];
  /** The SKILL.md the version was imported from (skill-export.ts gives it back while the fields match it). */
  importedMd?: ImportedSkillMd | null;
}

export interface ImportedSkillMd {
  text: string;
  /** SHA-256 (hex) of the SKILL.md export writes from the version's fields, at import. */
  renderedSha256: string;
}

const decodedBytes = (f: StoredFile) => (f.text !== undefined ? utf8Bytes(f.text) : Math.floor((f.base64!.length * 3) / 4));

/** The draft from validated fields; the slug defaults to one derived from the name. */
export function draftOf(v: z.output<typeof skillFieldRules>, extraFrontmatter: JsonObject, prefix = ""): SkillDraft {
  const slug = v.slug ?? slugFrom(v.name);
  if (slug === "") throw invalidRequest(`${prefix}slug`, "required", "is required when the name has no letter or digit to derive it from");
  const files = v.files.map((f): StoredFile => (f.data.case === "text" ? { path: f.path, text: f.data.value! } : { path: f.path, base64: f.data.value! }));
  const total = utf8Bytes(v.content) + files.reduce((sum, f) => sum + decodedBytes(f), 0);
  if (total > skillLimits.skillBytes) {
    throw invalidRequest(`${prefix}files`, "max_size", `the body and files together must be at most ${skillLimits.skillBytes} bytes, got ${total}`);
  }
  return {
    slug,
    name: v.name,
    description: v.description,
    content: v.content,
    tags: [...new Set(v.tags)],
    containers: [...new Set(v.containers)],
    maturity: v.maturity,
    license: v.license ?? null,
    compatibility: v.compatibility ?? null,
    allowedTools: [...new Set(v.allowedTools)],
    metadata: v.metadata,
    extraFrontmatter,
    files,
  };
}

/** Files as the API shows them. */
export const fileMessages = (files: readonly StoredFile[]): Array<Pick<SkillFile, "path" | "data">> =>
  files.map((f) => ({ path: f.path, data: f.text !== undefined ? { case: "text", value: f.text } : { case: "base64", value: f.base64! } }));

/** Fields of an update: what the mask names, or every field set when it is empty. */
export const updatableFields = [
  "name",
  "description",
  "content",
  "tags",
  "containers",
  "maturity",
  "license",
  "compatibility",
  "allowedTools",
  "metadata",
  "files",
] as const;
export type UpdatableField = (typeof updatableFields)[number];

const snakeCase = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function fieldsToUpdate(set: (f: UpdatableField) => boolean, maskPaths: readonly string[]): UpdatableField[] {
  if (maskPaths.length === 0) return updatableFields.filter(set);
  return maskPaths.map((path) => {
    const field = updatableFields.find((f) => f === path || snakeCase(f) === path);
    if (!field) throw invalidRequest("updateMask", "enum", `unknown field ${path}; one of ${updatableFields.join(", ")}`);
    return field;
  });
}

/** Search and list sizes. */
export const skillQueryLimits = { queryChars: 4096, defaultLimit: 10, maxLimit: 100, defaultPageSize: 50, maxPageSize: 100 } as const;
