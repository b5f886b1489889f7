import { mkdir, readFile, writeFile } from "node:fs/promises";
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

/**
 * Imports the one TypeScript example of a docs page as a module. It is written inside the client package's
 * directory (`clients/<name>/.doc-examples/`) so that its imports resolve against that package's dependencies.
 */
export async function importDocExample<T>(page: string, clientPackage: string): Promise<T> {
  const [code, ...more] = await docExamples(page, "ts");
  if (code === undefined || more.length > 0) throw new Error(`${page} must hold exactly one ts example`);
  const dir = path.join(repoRoot, "clients", clientPackage, ".doc-examples");
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${path.basename(page, ".md")}.ts`);
  await writeFile(file, code);
  return (await import(file)) as T;
}
