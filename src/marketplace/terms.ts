import { readFileSync } from "node:fs";
import { parseFrontmatter, splitSkillMd } from "../skills/skill-md.js";

/** The marketplace's content terms: their version (recorded with each publication and fork) and Markdown text. */
export interface MarketplaceTerms {
  version: string;
  content: string;
}

export const defaultTermsPath = new URL("./default-terms.md", import.meta.url);

const maxVersionChars = 64;

/**
 * Terms are Markdown with a YAML frontmatter holding `version` (the same delimiters as SKILL.md);
 * the body is what callers read. Throws a message for the operator when the file has no version.
 */
export function parseTerms(text: string): MarketplaceTerms {
  const split = splitSkillMd(text);
  if ("rule" in split) throw new Error("must start with YAML frontmatter between --- lines holding version");
  const front = parseFrontmatter(split.yaml);
  if ("rule" in front) throw new Error(front.message);
  const version = front.data.version;
  if (typeof version !== "string" || version.trim() === "" || version.length > maxVersionChars) {
    throw new Error(`the frontmatter must give version: 1 to ${maxVersionChars} characters`);
  }
  const content = split.body.replace(/^\r?\n/, "");
  if (content.trim() === "") throw new Error("the terms after the frontmatter are empty");
  return { version: version.trim(), content };
}

export const readTerms = (file: string | URL): MarketplaceTerms => parseTerms(readFileSync(file, "utf8"));
