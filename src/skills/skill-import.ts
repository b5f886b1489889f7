import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { z } from "zod";
import { apiError } from "../errors/api-error.js";
import { fieldPath } from "../validation.js";
import { carriedKeys, isText, parseFrontmatter, specKeys, splitSkillMd, splitTools, type Violation } from "./skill-md.js";
import { formatLimits, maturities, skillFieldRules, skillLimits, type SkillFieldInput } from "./skill-rules.js";

// SKILL.md -> skill fields. Every violation of the file is collected and answered at once.

export interface ImportedFields {
  fields: z.output<typeof skillFieldRules>;
  extraFrontmatter: JsonObject;
  warnings: Array<{ field: string; message: string }>;
  /** Which fields SKILL.md has no place for came back from export's metadata keys. */
  carried: { name: boolean; maturity: boolean; tags: boolean };
}

export interface ImportOptions {
  files: SkillFieldInput["files"];
  containers: string[];
  tags: string[];
}

/** The API field each frontmatter key fills, for naming violations the way the file does. */
const frontmatterFieldOf: Record<string, string> = {
  slug: "frontmatter.name",
  name: `frontmatter.metadata.${carriedKeys.name}`,
  description: "frontmatter.description",
  content: "content",
  license: "frontmatter.license",
  compatibility: "frontmatter.compatibility",
  allowedTools: "frontmatter.allowed-tools",
  metadata: "frontmatter.metadata",
  maturity: `frontmatter.metadata.${carriedKeys.maturity}`,
};

function ruleOf(issue: z.core.$ZodIssue): string {
  const params = (issue as { params?: { rule?: string } }).params;
  if (params?.rule) return params.rule;
  if (issue.code === "too_small") return issue.origin === "array" ? "min_items" : "min_length";
  if (issue.code === "too_big") return issue.origin === "array" ? "max_items" : "max_length";
  if (issue.code === "invalid_format") return "format";
  if (issue.code === "invalid_type") return issue.input === undefined ? "required" : "type";
  return issue.code;
}

/** invalid_request listing every violation: details carry the first's field and rule, and one entry per field. */
export function violationsError(violations: readonly Violation[]) {
  const first = violations[0]!;
  const details: Record<string, string> = { field: first.field, rule: first.rule };
  for (const v of violations) details[v.field] ??= v.rule;
  const message = violations.map((v) => `${v.field}: ${v.message}`).join("; ");
  return apiError("invalid_request", message, details);
}

const textOrViolation = (data: JsonObject, key: string, violations: Violation[]): string | undefined => {
  const value = data[key];
  if (value === undefined) return undefined;
  if (isText(value)) return value;
  violations.push({ field: `frontmatter.${key}`, rule: "type", message: "must be a string" });
  return undefined;
};

/** Reads a SKILL.md text into skill fields; throws invalid_request listing every violation. */
export function importSkillMd(text: string, opts: ImportOptions): ImportedFields {
  const maxText = skillLimits.contentBytes + 65_536 + 16;
  if (text.length > maxText) {
    throw violationsError([{ field: "content", rule: "max_size", message: `must be at most ${maxText} characters` }]);
  }
  const split = splitSkillMd(text);
  if ("rule" in split) throw violationsError([split]);
  const parsed = parseFrontmatter(split.yaml);
  if ("rule" in parsed) throw violationsError([parsed]);
  const data = parsed.data;
  const violations: Violation[] = [];
  const warnings: ImportedFields["warnings"] = [];

  const slug = textOrViolation(data, "name", violations);
  if (data.name === undefined) violations.push({ field: "frontmatter.name", rule: "required", message: "is required" });
  const description = textOrViolation(data, "description", violations);
  if (data.description === undefined) violations.push({ field: "frontmatter.description", rule: "required", message: "is required" });
  const license = textOrViolation(data, "license", violations);
  const compatibility = textOrViolation(data, "compatibility", violations);

  let allowedTools: string[] = [];
  const tools = data["allowed-tools"];
  if (isText(tools)) allowedTools = splitTools(tools);
  else if (Array.isArray(tools) && tools.every(isText)) {
    allowedTools = tools as string[];
    warnings.push({ field: "frontmatter.allowed-tools", message: "is a YAML list; the specification writes one space-separated string" });
  } else if (tools !== undefined) {
    violations.push({ field: "frontmatter.allowed-tools", rule: "type", message: "must be a space-separated string of tool names" });
  }

  const metadata: Record<string, string> = {};
  const rawMetadata = data.metadata;
  if (rawMetadata !== undefined) {
    if (rawMetadata === null || typeof rawMetadata !== "object" || Array.isArray(rawMetadata)) {
      violations.push({ field: "frontmatter.metadata", rule: "type", message: "must be a mapping of strings to strings" });
    } else {
      for (const [key, value] of Object.entries(rawMetadata)) {
        if (isText(value)) metadata[key] = value;
        else violations.push({ field: `frontmatter.metadata.${key}`, rule: "type", message: "must be a string" });
      }
    }
  }
  // Fields export carried in metadata come back out of it.
  const carriedName = metadata[carriedKeys.name];
  const name = carriedName ?? slug ?? "";
  const maturityName = metadata[carriedKeys.maturity];
  let maturity = 0;
  if (maturityName !== undefined) {
    maturity = maturities.byName.get(maturityName) ?? -1;
    if (maturity === -1) {
      violations.push({ field: `frontmatter.metadata.${carriedKeys.maturity}`, rule: "enum", message: `must be one of ${maturities.list}` });
    }
  }
  let carriedTags: string[] = [];
  const tagsText = metadata[carriedKeys.tags];
  if (tagsText !== undefined) {
    const tags = safeJson(tagsText);
    if (Array.isArray(tags) && tags.every(isText)) carriedTags = tags as string[];
    else violations.push({ field: `frontmatter.metadata.${carriedKeys.tags}`, rule: "type", message: "must be a JSON array of strings" });
  }
  for (const key of Object.values(carriedKeys)) delete metadata[key];

  const extraFrontmatter: JsonObject = {};
  for (const [key, value] of Object.entries(data)) {
    if (specKeys.includes(key as never)) continue;
    extraFrontmatter[key] = value;
    warnings.push({ field: `frontmatter.${key}`, message: "is not an Agent Skills field; kept and written back on export" });
  }

  const input: SkillFieldInput = {
    slug: slug ?? "",
    name,
    description: description ?? "",
    content: split.body,
    tags: opts.tags.length > 0 ? opts.tags : carriedTags,
    containers: opts.containers,
    maturity: Math.max(0, maturity),
    license,
    compatibility,
    allowedTools,
    metadata,
    files: opts.files,
  };
  const result = skillFieldRules.safeParse(input);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const [top, ...rest] = issue.path;
      // Missing name/description are already reported as required.
      if ((top === "slug" && data.name === undefined) || (top === "description" && data.description === undefined)) continue;
      if (top === "name" && slug === undefined) continue;
      const base = frontmatterFieldOf[String(top)] ?? String(top);
      violations.push({ field: fieldPath(rest, base), rule: ruleOf(issue), message: issue.message });
    }
  }
  if (violations.length > 0 || !result.success) throw violationsError(violations);
  for (const [key, limit] of Object.entries(formatLimits)) {
    const value = result.data[key as keyof typeof formatLimits];
    if (value !== undefined && value.length > limit) {
      warnings.push({
        field: `frontmatter.${key}`,
        message: `is ${value.length} characters; the Agent Skills format allows ${limit} (stored as written)`,
      });
    }
  }
  const carried = { name: carriedName !== undefined, maturity: maturityName !== undefined, tags: tagsText !== undefined };
  return { fields: result.data, extraFrontmatter, warnings, carried };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}
