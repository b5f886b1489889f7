import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { isMap, parseDocument, stringify, visit, type Document, type Node } from "yaml";

// SKILL.md (the Agent Skills format): YAML frontmatter between `---` lines, then the Markdown body.
// Parsing is bounded: the frontmatter is at most 64 KiB and may use at most a few aliases, so no input
// can make the YAML parser or its alias expansion stall the event loop.

export const frontmatterMaxBytes = 65_536;
const maxAliasCount = 16;

/** One problem with a SKILL.md file, named like an API field (frontmatter.description). */
export interface Violation {
  field: string;
  rule: string;
  message: string;
}

/** The frontmatter keys the Agent Skills specification defines, in the order export writes them. */
export const specKeys = ["name", "description", "license", "compatibility", "allowed-tools", "metadata"] as const;

/**
 * Metadata keys through which export carries the skill fields SKILL.md has no place for, so that
 * importing an exported file gives the same skill; import takes them back out of `metadata`.
 */
export const carriedKeys = { name: "agentmem.name", maturity: "agentmem.maturity", tags: "agentmem.tags" } as const;

export interface SplitFile {
  /** The YAML between the delimiters. */
  yaml: string;
  /** Everything after the closing delimiter line, byte for byte. */
  body: string;
}

/** Splits a SKILL.md text at its frontmatter delimiters; a leading BOM is dropped. */
export function splitSkillMd(text: string): SplitFile | Violation {
  const src = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const opening = /^---[ \t]*\r?\n/.exec(src);
  if (!opening) {
    return { field: "content", rule: "frontmatter", message: "must start with YAML frontmatter between --- lines" };
  }
  // The first line that is exactly --- (trailing blanks allowed) closes the frontmatter; later --- lines are body.
  const limit = Math.min(src.length, opening[0].length + frontmatterMaxBytes + 8);
  let lineStart = opening[0].length;
  while (lineStart <= limit) {
    const newline = src.indexOf("\n", lineStart);
    const lineEnd = newline === -1 ? src.length : newline;
    if (lineEnd - lineStart <= 64 && /^---[ \t]*\r?$/.test(src.slice(lineStart, lineEnd))) {
      const yaml = src.slice(opening[0].length, lineStart);
      if (Buffer.byteLength(yaml, "utf8") > frontmatterMaxBytes) break;
      return { yaml, body: newline === -1 ? "" : src.slice(newline + 1) };
    }
    if (newline === -1) break;
    lineStart = newline + 1;
  }
  if (limit < src.length || Buffer.byteLength(src, "utf8") > frontmatterMaxBytes) {
    return { field: "content", rule: "frontmatter_size", message: `frontmatter must end within ${frontmatterMaxBytes} bytes` };
  }
  return { field: "content", rule: "frontmatter", message: "frontmatter is not closed by a --- line" };
}

/**
 * Parses the frontmatter YAML. The failsafe schema reads every scalar as a string, as the Agent Skills
 * fields are ("version: 1.0" stays "1.0"); block scalars, quoting and nesting are YAML syntax and work.
 */
export function parseFrontmatter(yaml: string): { data: JsonObject } | Violation {
  const doc = parseDocument(yaml, { schema: "failsafe", uniqueKeys: true, prettyErrors: false });
  const error = doc.errors[0];
  if (error) return { field: "content", rule: "yaml", message: `frontmatter is not valid YAML: ${error.message.split("\n")[0]}` };
  if (doc.contents === null) return { data: {} };
  if (!isMap(doc.contents)) return { field: "content", rule: "yaml", message: "frontmatter must be a YAML mapping" };
  if (holdsCycle(doc)) return { field: "content", rule: "yaml", message: "frontmatter must not use an alias inside the node its anchor names (a cycle)" };
  try {
    return { data: doc.toJS({ maxAliasCount }) as JsonObject };
  } catch (err) {
    return { field: "content", rule: "yaml", message: `frontmatter is not valid YAML: ${(err as Error).message}` };
  }
}

/** An alias inside the node it refers to makes the value a cycle, which no JSON (or stored skill) can hold. */
function holdsCycle(doc: Document): boolean {
  let cycle = false;
  visit(doc, {
    Alias(_, alias, path) {
      if (!path.includes(alias.resolve(doc) as Node)) return undefined;
      cycle = true;
      return visit.BREAK;
    },
  });
  return cycle;
}

/** True when a frontmatter value is a plain string (not a mapping or a list). */
export const isText = (v: JsonValue | undefined): v is string => typeof v === "string";

/** What export writes; `extra` are the unknown keys kept from import, written after the specification's. */
export interface SkillMdFields {
  slug: string;
  description: string;
  license: string | null;
  compatibility: string | null;
  allowedTools: string[];
  metadata: Record<string, string>;
  extra: JsonObject;
  body: string;
}

/** The SKILL.md text: canonical key order, then the body byte for byte. */
export function writeSkillMd(f: SkillMdFields): string {
  const front: Record<string, unknown> = { name: f.slug, description: f.description };
  if (f.license !== null) front.license = f.license;
  if (f.compatibility !== null) front.compatibility = f.compatibility;
  if (f.allowedTools.length > 0) front["allowed-tools"] = f.allowedTools.join(" ");
  if (Object.keys(f.metadata).length > 0) front.metadata = f.metadata;
  for (const [key, value] of Object.entries(f.extra)) if (!(key in front) && !specKeys.includes(key as never)) front[key] = value;
  // lineWidth 0: long descriptions stay on one line instead of being folded.
  return `---\n${stringify(front, { lineWidth: 0 })}---\n${f.body}`;
}

/**
 * Splits an `allowed-tools` string into tool names: separated by spaces (the specification) or commas
 * (common in the wild), except inside parentheses, so `Bash(git log:*) Read` is two tools.
 */
export function splitTools(text: string): string[] {
  const tools: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (depth === 0 && (ch === "," || /\s/.test(ch))) {
      if (current !== "") tools.push(current);
      current = "";
      continue;
    }
    if (ch === "(") depth++;
    else if (ch === ")" && depth > 0) depth--;
    current += ch;
  }
  if (current !== "") tools.push(current);
  return tools;
}
