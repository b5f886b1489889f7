import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitSkillMd } from "../../src/skills/skill-md.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const run = promisify(execFile);
const fixtures = "test/skills/fixtures";

describe("agentmem skills import|export", () => {
  let server: TestServer;
  let env: NodeJS.ProcessEnv;
  let out: string;

  beforeAll(async () => {
    server = await startTestServer("pglite");
    env = { ...process.env, AGENTMEM_URL: server.url, AGENTMEM_API_KEY: await server.createKey("acme", "agent-1") };
    out = await mkdtemp(path.join(os.tmpdir(), "agentmem-export-"));
  });
  afterAll(async () => {
    await server?.close();
    await rm(out, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => run(process.execPath, ["src/cli/agentmem.mjs", "skills", ...args], { env });

  it("imports a skill directory with its files and a lone SKILL.md, then exports the directory back", async () => {
    const imported = await cli("import", `${fixtures}/pdf-tools`, `${fixtures}/block-scalars.md`);
    const lines = imported.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines).toMatchObject([
      { slug: "pdf-tools", version: 1, created: true, warnings: [] },
      { slug: "release-notes", version: 1, created: true },
    ]);

    const exported = await cli("export", "pdf-tools", out);
    expect(JSON.parse(exported.stdout)).toMatchObject({ slug: "pdf-tools", files: ["SKILL.md", "assets/logo.png", "scripts/extract.py"] });
    for (const file of ["scripts/extract.py", "assets/logo.png"]) {
      expect(await readFile(path.join(out, file))).toEqual(await readFile(path.join(fixtures, "pdf-tools", file)));
    }
    const body = (text: string) => (splitSkillMd(text) as { body: string }).body;
    expect(body(await readFile(path.join(out, "SKILL.md"), "utf8"))).toBe(body(await readFile(`${fixtures}/pdf-tools/SKILL.md`, "utf8")));

    // Importing the exported directory makes a new version of the same skill.
    const again = await cli("import", out);
    expect(JSON.parse(again.stdout)).toMatchObject({ slug: "pdf-tools", version: 2, created: false });
  });

  it("exits 1 and reports the error when a file is not a valid SKILL.md", async () => {
    const failed = await cli("import", `${fixtures}/pdf-tools/scripts/extract.py`).catch((err: { code: number; stderr: string }) => err);
    expect(failed).toMatchObject({ code: 1 });
    expect(JSON.parse((failed as { stderr: string }).stderr)).toMatchObject({ error: { code: "invalid_request", details: { rule: "frontmatter" } } });
  });
});
