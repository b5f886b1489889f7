import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { appendFile, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, startTestServer, type TestServer } from "../support/test-server.js";

const run = promisify(execFile);

describe("agentmem skills lock|verify|install --from", () => {
  let server: TestServer;
  let dir: string;
  let authorKey: string;

  beforeAll(async () => {
    server = await startTestServer("pglite", { MARKETPLACE_ENABLED: "true" });
    authorKey = await server.createKey("lock-author");
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lock-"));
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const cli = async (key: string, ...args: string[]) =>
    run(process.execPath, ["src/cli/agentmem.mjs", "skills", ...args], { env: { ...process.env, AGENTMEM_URL: server.url, AGENTMEM_API_KEY: key } }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
  const lines = (text: string) => text.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

  it("locks the installed versions, verifies them against the server and the files on disk, and installs them elsewhere exactly", async () => {
    const author = rest(server.url, authorKey);
    const skill = (
      await author("POST", "/api/v1/agent/skills", {
        name: "json-diff",
        description: "Compares two JSON documents and lists what changed.",
        content: "# JSON diff\n",
        files: [{ path: "scripts/diff.py", text: "import json\n" }],
        metadata: { owner: "data" },
        tags: ["json"],
      })
    ).body.skill;
    await author("POST", "/api/v1/agent/skills/publish-public", { id: skill.id });
    const userKey = await server.createKey("lock-user");
    const user = rest(server.url, userKey);
    const copy = (await user("POST", "/api/v1/agent/marketplace/install", { id: skill.id })).body.skill;
    await author("POST", "/api/v1/agent/skills/update", { id: skill.id, content: "# JSON diff, v2\n" });

    const lockFile = path.join(dir, "skills-lock.json");
    expect((await cli(userKey, "lock", "--out", lockFile)).code).toBe(0);
    const lock = JSON.parse(await readFile(lockFile, "utf8"));
    expect(lock).toEqual({
      lockfileVersion: 1,
      skills: [{ id: skill.id, slug: "json-diff", authorHandle: "lock-author", version: 1, digest: copy.installedFrom.digest, installedAs: "json-diff" }],
    });

    const exportDir = path.join(dir, "exported");
    expect((await cli(userKey, "export", "json-diff", path.join(exportDir, "json-diff"))).code).toBe(0);
    const verified = await cli(userKey, "verify", "--lock", lockFile, "--dir", exportDir);
    expect(verified.stderr).toBe("");
    expect(lines(verified.stdout)).toEqual([{ lock: lockFile, skills: 1, problems: 0 }]);

    // Another workspace gets exactly the locked version, not the newest.
    const otherKey = await server.createKey("lock-other");
    const installed = await cli(otherKey, "install", "--from", lockFile);
    expect(installed.code).toBe(0);
    expect(lines(installed.stdout)).toEqual([{ skill: "lock-author/json-diff@1", installedAs: "json-diff", created: true }]);
    expect((await cli(otherKey, "verify", "--lock", lockFile)).code).toBe(0);

    // A changed file on disk and a yanked version both fail verify, naming what differs.
    await appendFile(path.join(exportDir, "json-diff", "scripts", "diff.py"), "print('x')\n");
    const tampered = await cli(userKey, "verify", "--lock", lockFile, "--dir", exportDir);
    expect(tampered.code).toBe(1);
    expect(lines(tampered.stderr)).toEqual([expect.objectContaining({ skill: "lock-author/json-diff@1", problem: "files" })]);
    await author("POST", "/api/v1/agent/skills/yank", { id: skill.id, version: 1, reason: "Wrong output for arrays." });
    const yanked = await cli(userKey, "verify", "--lock", lockFile);
    expect(yanked.code).toBe(1);
    expect(lines(yanked.stderr)).toEqual([{ skill: "lock-author/json-diff@1", problem: "yanked", reason: "Wrong output for arrays.", newestGoodVersion: 2 }]);
  });

  it("verifies an imported skill whose SKILL.md export gives back byte for byte, against the server and the disk", async () => {
    // YAML a writer would not produce: a block scalar, a folded one, quoted and unquoted values.
    const skillMd = readFileSync(new URL("./fixtures/block-scalars.md", import.meta.url), "utf8");
    const author = rest(server.url, authorKey);
    const { skill } = (await author("POST", "/api/v1/agent/skills/import", { content: skillMd })).body;
    expect((await author("POST", "/api/v1/agent/skills/publish-public", { id: skill.id })).status).toBe(200);
    const userKey = await server.createKey("lock-importer");
    expect((await rest(server.url, userKey)("POST", "/api/v1/agent/marketplace/install", { id: skill.id })).status).toBe(200);

    const lockFile = path.join(dir, "imported-lock.json");
    expect((await cli(userKey, "lock", "--out", lockFile)).code).toBe(0);
    const exportDir = path.join(dir, "imported");
    expect((await cli(userKey, "export", skill.slug, path.join(exportDir, skill.slug))).code).toBe(0);
    expect(await readFile(path.join(exportDir, skill.slug, "SKILL.md"), "utf8")).toBe(skillMd);
    const verified = await cli(userKey, "verify", "--lock", lockFile, "--dir", exportDir);
    expect(verified.stderr).toBe("");
    expect(lines(verified.stdout)).toEqual([{ lock: lockFile, skills: 1, problems: 0 }]);
  });
});
