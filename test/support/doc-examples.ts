import { readFile } from "node:fs/promises";
import path from "node:path";

const repoRoot = path.resolve(import.meta.dirname, "../..");

/**
 * The fenced code blocks of one language on a docs page (path from the repository root), in page order:
 * the examples a test runs, so a page never shows code that does not work.
 */
export async function docExamples(page: string, language: string): Promise<string[]> {
  const text = await readFile(path.join(repoRoot, page), "utf8");
  const fence = new RegExp("^```" + language + "\\n([\\s\\S]*?)^```$", "gm");
  return [...text.matchAll(fence)].map((m) => m[1]!);
}
