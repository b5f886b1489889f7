import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, startTestServer, type TestServer } from "../support/test-server.js";

const run = promisify(execFile);

describe("agentmem memories list|export|import", () => {
  let server: TestServer;
  let env: NodeJS.ProcessEnv;
  let dir: string;
  let api: ReturnType<typeof rest>;

  beforeAll(async () => {
    server = await startTestServer("pglite", { CONTRADICTIONS_ENABLED: "false" });
    const key = await server.createKey("acme", "agent-1");
    env = { ...process.env, AGENTMEM_URL: server.url, AGENTMEM_API_KEY: key };
    api = rest(server.url, key);
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-memories-cli-"));
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => run(process.execPath, ["src/cli/agentmem.mjs", "memories", ...args], { env, maxBuffer: 64 << 20 });
  const failing = (...args: string[]) => cli(...args).then(() => expect.unreachable("exit 0"), (err: { code: number; stdout: string; stderr: string }) => err);
  const lines = (text: string) => text.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const stored = async () => {
    const all: Array<{ content: string }> = [];
    let token: string | undefined;
    do {
      const page = await api("GET", `/api/v1/agent/memories?pageSize=200${token ? `&pageToken=${token}` : ""}`);
      all.push(...page.body.memories);
      token = page.body.nextPageToken;
    } while (token);
    return all;
  };

  const lineOf = (i: number) =>
    JSON.stringify({ content: `Imported fact number ${i} about ${["atlas", "borealis", "cygnus"][i % 3]}`, type: i % 4 === 0 ? "lesson" : "fact", tags: [`t${i % 5}`], metadata: { project: ["atlas", "borealis", "cygnus"][i % 3], n: i } });

  it("imports in batches, resumes after a failed batch from its checkpoint, and never stores a line twice", async () => {
    const file = path.join(dir, "memories.jsonl");
    const content = Array.from({ length: 250 }, (_, i) => lineOf(i));
    content[179] = JSON.stringify({ content: "A line with an unknown type", type: "fiction" });
    await writeFile(file, content.join("\n") + "\n");

    const failed = await failing("import", file, "--batch-size", "50");
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("line 180:");
    expect(failed.stderr).toContain("resumes after line 150");
    expect(JSON.parse(await readFile(`${file}.checkpoint`, "utf8"))).toMatchObject({ line: 150 });
    expect(await stored()).toHaveLength(150);

    content[179] = lineOf(179);
    await writeFile(file, content.join("\n") + "\n");
    // The fixed file has another size, so the old checkpoint would not apply; it is rewritten as the run would have.
    await writeFile(`${file}.checkpoint`, JSON.stringify({ size: (await readFile(file)).length, line: 150 }));
    const resumed = await cli("import", file, "--batch-size", "50");
    expect(JSON.parse(resumed.stdout)).toMatchObject({ lines: 250, resumedAfterLine: 150, imported: 100, duplicates: 0 });
    await expect(readFile(`${file}.checkpoint`)).rejects.toThrow();
    expect(await stored()).toHaveLength(250);

    // A run that stored batches but lost its checkpoint (a crash before writing it) repeats them: the
    // batches' idempotency keys replay the first answers, and nothing is stored twice.
    await writeFile(`${file}.checkpoint`, JSON.stringify({ size: (await readFile(file)).length, line: 100 }));
    await cli("import", file, "--batch-size", "50");
    expect(await stored()).toHaveLength(250);
    const contents = (await stored()).map((m) => m.content);
    expect(new Set(contents).size).toBe(250);
  });

  it("lists with filters given as flags, and exports everything as JSON lines that import again", async () => {
    const listed = lines((await cli("list", "--type", "lesson", "--metadata", '{"project":"atlas"}', "--limit", "5")).stdout);
    expect(listed).toHaveLength(5);
    for (const m of listed) expect(m).toMatchObject({ type: "lesson", metadata: { project: "atlas" } });
    expect(lines((await cli("list", "--tag", "t1", "--tag", "t2", "--limit", "1000")).stdout)).toHaveLength(100);

    const out = path.join(dir, "export.jsonl");
    const exported = await cli("export", "--out", out);
    expect(JSON.parse(exported.stderr)).toEqual({ exported: 250, out });
    const rows = lines(await readFile(out, "utf8"));
    expect(rows).toHaveLength(250);
    expect(new Set(rows.map((r) => r.id)).size).toBe(250);
    const toStdout = lines((await cli("export", "--metadata", '{"project":"cygnus"}')).stdout);
    expect(toStdout.map((r) => r.id)).toEqual(rows.filter((r) => r.metadata.project === "cygnus").map((r) => r.id));

    // Into another container: the export's own fields (id, version, times) are the server's to assign.
    const other = rest(server.url, await server.createKey("acme", "agent-2"));
    const moved = rows.map((r) => JSON.stringify({ ...r, containers: ["agent-2"] }));
    await writeFile(out, moved.join("\n") + "\n");
    const imported = await run(process.execPath, ["src/cli/agentmem.mjs", "memories", "import", out], {
      env: { ...env, AGENTMEM_API_KEY: await server.createKey("acme") },
    });
    expect(JSON.parse(imported.stdout)).toMatchObject({ imported: 250, duplicates: 0 });
    // Imported in file order, so the export's last line (its oldest memory) is now the newest.
    const copy = await other("GET", "/api/v1/agent/memories?containers=agent-2&pageSize=1");
    const last = rows.at(-1)!;
    expect(copy.body.memories[0]).toMatchObject({ content: last.content, metadata: last.metadata, tags: last.tags, type: last.type, containers: ["agent-2"] });
  });

  it("reports server errors and unreadable files with exit code 1, unknown flags with 2, each as agentmem: …", async () => {
    expect((await failing("list", "--metadata", "not json")).stderr).toContain('"field":"metadata"');
    const missing = path.join(dir, "missing.jsonl");
    expect(await failing("import", missing)).toMatchObject({ code: 1, stderr: `agentmem: cannot read ${missing}: no such file\n` });
    expect(await failing("list", "--limit", "abc")).toMatchObject({ code: 1, stderr: "agentmem: --limit must be a positive integer\n" });
    const unknownFlag = await failing("list", "--colour", "red");
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toMatch(/^agentmem: Unknown option '--colour'/);
  });
});
