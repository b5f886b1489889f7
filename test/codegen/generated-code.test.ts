import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name))).sort();
}

describe("gen/", () => {
  it("matches what `buf generate` writes from proto/ (run `npm run generate` when this fails)", async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), "agentmem-gen-"));
    try {
      await run("npx", ["buf", "generate", "--output", out], { timeout: 120_000 });
      const fresh = path.join(out, "gen");
      const files = await listFiles(fresh);
      expect(await listFiles("gen")).toEqual(files);
      for (const file of files) {
        expect(await readFile(path.join("gen", file), "utf8"), `gen/${file} is stale`).toBe(
          await readFile(path.join(fresh, file), "utf8"),
        );
      }
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it("passes buf lint", async () => {
    await expect(run("npx", ["buf", "lint"], { timeout: 60_000 })).resolves.toBeDefined();
  });
});
