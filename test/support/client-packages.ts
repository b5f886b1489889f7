import { execFile } from "node:child_process";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

// Vitest global setup: the framework adapters under clients/ keep their dependencies (ai, @langchain/core,
// @openai/agents) in their own node_modules, out of the server's install. Before the tests import them, each
// is installed with `npm ci` when its lock file is newer than its install, and built (type-checked) with the
// repository's tsc when a source file is newer than its build.

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
const tsc = path.join(root, "node_modules/typescript/bin/tsc");
/** In build order: the adapters depend on rest. */
const clientPackages = ["rest", "ai-sdk", "langchain", "openai-agents"];

async function mtime(file: string): Promise<number> {
  return stat(file).then((s) => s.mtimeMs, () => 0);
}

async function newestSource(dir: string): Promise<number> {
  const files = await readdir(path.join(dir, "src"), { recursive: true });
  const times = await Promise.all(files.map((f) => mtime(path.join(dir, "src", f))));
  return Math.max(await mtime(path.join(dir, "tsconfig.json")), ...times);
}

async function prepare(name: string): Promise<void> {
  const dir = path.join(root, "clients", name);
  const lock = await mtime(path.join(dir, "package-lock.json"));
  if (lock > 0 && (await mtime(path.join(dir, "node_modules/.package-lock.json"))) < lock) {
    await run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, timeout: 600_000 });
  }
  if ((await newestSource(dir)) > (await mtime(path.join(dir, "dist/index.js")))) {
    await run(process.execPath, [tsc, "-p", dir], { timeout: 300_000 }).catch((err: { stdout?: string }) => {
      throw new Error(`tsc -p clients/${name} failed:\n${err.stdout}`);
    });
  }
}

export default async function setup(): Promise<void> {
  for (const name of clientPackages) {
    const exists = await stat(path.join(root, "clients", name, "package.json")).then(() => true, () => false);
    if (exists) await prepare(name);
  }
}
