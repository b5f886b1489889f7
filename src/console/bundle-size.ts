import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";

/** The console's JavaScript must stay under this many bytes, gzipped. */
export const javascriptBudgetBytes = 250_000;

/** Every .js file under `dir`, each gzipped on its own (as a server would send it), summed. */
export function gzippedJavaScriptBytes(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  if (!existsSync(dir)) return { files, bytes };
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".js")) continue;
    files++;
    bytes += gzipSync(readFileSync(path.join(entry.parentPath, entry.name))).length;
  }
  return { files, bytes };
}

/** The check `npm run build` ends with: a line to print, and whether the build passes. */
export function checkBundleSize(dir: string, budget = javascriptBudgetBytes): { ok: boolean; message: string } {
  const { files, bytes } = gzippedJavaScriptBytes(dir);
  const size = `${(bytes / 1000).toFixed(1)} KB gzipped in ${files} file${files === 1 ? "" : "s"}`;
  if (files === 0) return { ok: false, message: `console JavaScript: no .js file under ${dir}; did the build run?` };
  return bytes <= budget
    ? { ok: true, message: `console JavaScript: ${size} (budget ${budget / 1000} KB)` }
    : { ok: false, message: `console JavaScript: ${size}, over the budget of ${budget / 1000} KB` };
}
