import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPglite } from "../../src/db/pglite.js";
import { migrate } from "../../src/db/migrations.js";
import { startsProcessesTimeoutMs } from "../support/test-server.js";

// New PGlite clusters are copies of a template made by the first initdb; these tests give the template
// a directory of their own, so the suite's other files keep using the shared one.
describe("PGlite cluster template", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-template-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function usable(dataDir: string, templatePath: string): Promise<void> {
    const db = await openPglite(dataDir, { templatePath, vector: true });
    try {
      expect((await migrate(db)).length).toBeGreaterThan(0);
      await db.query("insert into workspaces (id, name) values ($1, $2)", ["ws_1", "acme"]);
      expect(await db.query("select name from workspaces")).toEqual([{ name: "acme" }]);
    } finally {
      await db.close();
    }
  }

  it("is made by the first new cluster and copied by the next, in memory and on disk", async () => {
    const templatePath = path.join(dir, "made", "cluster.tar");
    await usable("memory://", templatePath);
    const made = await readFile(templatePath);
    expect(made.length).toBeGreaterThan(1_000_000);

    await usable("memory://", templatePath);
    const dataDir = path.join(dir, "data");
    await usable(dataDir, templatePath);
    expect(existsSync(path.join(dataDir, "pg", "PG_VERSION"))).toBe(true);
    // Reopened, the directory keeps what was written, and the template was left as it was.
    const db = await openPglite(dataDir, { templatePath });
    expect(await db.query("select name from workspaces")).toEqual([{ name: "acme" }]);
    await db.close();
    expect((await readFile(templatePath)).equals(made)).toBe(true);
  }, startsProcessesTimeoutMs);

  it("replaces a template that does not load, in memory and on disk", async () => {
    for (const dataDir of ["memory://", path.join(dir, "from-broken")]) {
      const templatePath = path.join(dir, "broken.tar");
      await writeFile(templatePath, "not a tar archive");
      await usable(dataDir, templatePath);
      expect((await readFile(templatePath)).length).toBeGreaterThan(1_000_000);
    }
  }, startsProcessesTimeoutMs);

  it("works where the template cannot be written: each cluster runs initdb", async () => {
    const blocker = path.join(dir, "a-file");
    await writeFile(blocker, "");
    // A path under a regular file cannot be created.
    const templatePath = path.join(blocker, "cluster.tar");
    await usable("memory://", templatePath);
    expect(existsSync(templatePath)).toBe(false);
  }, startsProcessesTimeoutMs);
});
