import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** The repository's root. */
export const root = new URL("../..", import.meta.url).pathname;

/** README.md, bench/README.md and every Markdown file under docs/, as paths relative to the root. */
export function documentationFiles(): string[] {
  const files = ["README.md", "bench/README.md"];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const relative = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith(".md")) files.push(relative);
    }
  };
  walk("docs");
  return files;
}

/** The lines of a Markdown text outside fenced code blocks, with inline code spans blanked. */
export function proseLines(text: string): Array<{ line: number; text: string }> {
  const lines: Array<{ line: number; text: string }> = [];
  let fence: string | undefined;
  text.split("\n").forEach((line, index) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker) {
      if (fence === undefined) fence = marker[0];
      else if (marker[0] === fence) fence = undefined;
      return;
    }
    if (fence === undefined) lines.push({ line: index + 1, text: line.replace(/(`+)[^`]*?\1/g, "``") });
  });
  return lines;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function headingSlug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, "").replace(/ /g, "-");
}

/** Every anchor a Markdown file has: its headings' slugs (repeats get -1, -2…) and explicit ids. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of text.split("\n")) {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker) {
      if (fence === undefined) fence = marker[0];
      else if (marker[0] === fence) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    const heading = /^#{1,6} (.*?)#*\s*$/.exec(line);
    if (heading) {
      const slug = headingSlug(heading[1]!.replace(/`/g, ""));
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const id of line.matchAll(/<a (?:id|name)="([^"]+)"/g)) anchors.add(id[1]!);
  }
  return anchors;
}

export interface Link {
  file: string;
  line: number;
  target: string;
}

/** The relative links of a Markdown file: inline links and images, and reference definitions. */
export function relativeLinks(file: string): Link[] {
  const text = readFileSync(path.join(root, file), "utf8");
  const links: Link[] = [];
  for (const { line, text: prose } of proseLines(text)) {
    const targets = [
      ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
      ...[...prose.matchAll(/^\s*\[[^\]]+\]:\s+(\S+)/g)].map((m) => m[1]!),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: and the like
      links.push({ file, line, target });
    }
  }
  return links;
}

/** Why a link does not resolve, or undefined when it does. */
export function brokenReason(link: Link): string | undefined {
  const [rawPath, anchor] = link.target.split("#", 2) as [string, string | undefined];
  const targetFile = rawPath === "" ? link.file : path.posix.normalize(path.posix.join(path.posix.dirname(link.file), decodeURIComponent(rawPath)));
  if (targetFile.startsWith("..")) return `${targetFile} is outside the repository`;
  let stat;
  try {
    stat = statSync(path.join(root, targetFile));
  } catch {
    return `${targetFile} does not exist`;
  }
  if (anchor === undefined || anchor === "") return undefined;
  if (!stat.isFile() || !targetFile.endsWith(".md")) return `#${anchor} points into ${targetFile}, which is not a Markdown file`;
  const anchors = anchorsOf(readFileSync(path.join(root, targetFile), "utf8"));
  return anchors.has(decodeURIComponent(anchor)) ? undefined : `${targetFile} has no heading for #${anchor}`;
}
