import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { CST, isMap, Lexer, parseDocument, stringify, visit, type Document, type Node } from "yaml";

// SKILL.md (the Agent Skills format): YAML frontmatter between `---` lines, then the Markdown body.
// Parsing is bounded: the frontmatter is at most 64 KiB, and a linear pass of the YAML lexer refuses it
// before parsing when it has more keys and items, deeper nesting or more aliases than the limits below.
// Building the document costs about 30 µs a node (6,500 keys took 0.2-0.5 s, a cycle check over 5,000
// aliases 8-20 s), so the node count, not the byte count, is what bounds the time.

export const frontmatterMaxBytes = 65_536;

/** What the frontmatter may hold; real files use a few dozen keys, nesting of 2-3 and no aliases. */
export const frontmatterLimits = {
  /** Mapping keys, list items, flow brackets and tags (`!t`), at every depth together. */
  keys: 512,
  /** Nesting of mappings and lists (a top-level key's value is depth 1). */
  depth: 16,
  /** Anchors (`&a`) and aliases (`*a`) together; also bounds alias expansion. */
  aliases: 16,
  /** Lexer tokens of any kind (lines, comments, tags, scalars): bounds what the parser walks. */
  tokens: 8_192,
} as const;
const maxAliasCount = frontmatterLimits.aliases;

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
  const refused = scanFrontmatter(yaml);
  if (refused) return refused;
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

const tooMany = (rule: string, message: string): Violation => ({ field: "frontmatter", rule, message });

/**
 * One pass of the YAML lexer (linear, a few ms for 64 KiB) that stops at the first limit passed, so a
 * hostile frontmatter is refused before the parser builds anything. Block nesting is counted from the
 * columns at which lines, `-` items and `?` keys start; flow nesting from the brackets.
 */
export function scanFrontmatter(yaml: string): Violation | undefined {
  let tokens = 0;
  let keys = 0;
  let aliases = 0;
  let flow = 0;
  const indents: number[] = [];
  let column = 0;
  let lineStart = true;
  let afterIndicator = false;
  for (const token of new Lexer().lex(yaml)) {
    if (++tokens > frontmatterLimits.tokens) {
      return tooMany("max_tokens", `must have at most ${frontmatterLimits.tokens} YAML tokens (lines, keys, values, comments)`);
    }
    const type = CST.tokenType(token);
    const startColumn = column;
    const newline = token.lastIndexOf("\n");
    column = newline === -1 ? column + token.length : token.length - newline - 1;
    switch (type) {
      case "newline":
        lineStart = true;
        afterIndicator = false;
        continue;
      case "space":
      case "comment":
      case "byte-order-mark":
        continue;
      case "alias":
      case "anchor":
        if (++aliases > frontmatterLimits.aliases) {
          return tooMany("max_aliases", `must have at most ${frontmatterLimits.aliases} YAML anchors and aliases together`);
        }
        break;
      case "seq-item-ind":
      case "explicit-key-ind":
      case "map-value-ind":
      case "comma":
      case "flow-map-start":
      case "flow-seq-start":
      case "flow-map-end":
      case "flow-seq-end":
      case "tag":
        if (++keys > frontmatterLimits.keys) {
          return tooMany("max_keys", `must have at most ${frontmatterLimits.keys} keys and list items in all`);
        }
        break;
    }
    // Where a block node starts: the first token of a line, and the token after a `-` or `?` indicator.
    if (flow === 0 && (lineStart || afterIndicator) && type !== "doc-start" && type !== "doc-end" && type !== "directive-line") {
      while (indents.length > 0 && indents[indents.length - 1]! > startColumn) indents.pop();
      if (indents.length === 0 || indents[indents.length - 1]! < startColumn) indents.push(startColumn);
    }
    lineStart = false;
    afterIndicator = type === "seq-item-ind" || type === "explicit-key-ind";
    if (type === "flow-map-start" || type === "flow-seq-start") flow++;
    else if ((type === "flow-map-end" || type === "flow-seq-end") && flow > 0) flow--;
    // The top-level mapping is at column 0; its values are depth 1.
    if (indents.length - 1 + flow > frontmatterLimits.depth) {
      return tooMany("max_depth", `must nest mappings and lists at most ${frontmatterLimits.depth} deep`);
    }
  }
  return undefined;
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
