import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docExamples } from "../support/doc-examples.js";
import { adminKey, startsProcessesTimeoutMs, startTestServer, type TestServer } from "../support/test-server.js";

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, "../..");
// Debian's interpreter, whose python3-httpx, python3-hatchling and python3-pytest .ci/run installs (a
// python3 earlier on PATH, e.g. pyenv's, does not see them).
const python = process.env.AGENTMEM_PYTHON ?? "/usr/bin/python3";

describe("clients/python: the agentmem package, installed offline into a venv, against a real server", () => {
  let server: TestServer;
  let dir: string;
  let venvPython: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    [server, dir] = await Promise.all([
      startTestServer("pglite", { MARKETPLACE_ENABLED: "true" }),
      mkdtemp(path.join(os.tmpdir(), "agentmem-python-")),
    ]);
    // What the how-to page tells a user to run: a venv over Debian's packages, pip with no index.
    await run(python, ["-m", "venv", "--system-site-packages", path.join(dir, "venv")]);
    venvPython = path.join(dir, "venv/bin/python");
    await run(venvPython, ["-m", "pip", "install", "-q", "--no-index", "--no-build-isolation", path.join(repoRoot, "clients/python")], {
      timeout: startsProcessesTimeoutMs,
    });
    env = {
      PATH: process.env.PATH ?? "",
      // pytest imports the tests from the source tree: leave no __pycache__ there.
      PYTHONDONTWRITEBYTECODE: "1",
      AGENTMEM_URL: server.url,
      AGENTMEM_API_KEY: await server.createKey("python", "agent"),
      AGENTMEM_ADMIN_KEY: adminKey,
    };
  }, startsProcessesTimeoutMs);
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("passes its pytest suite", async () => {
    // pytest runs from a temporary directory so that it imports the installed package, not the source tree.
    const { stdout } = await run(venvPython, ["-m", "pytest", "-q", "-p", "no:cacheprovider", path.join(repoRoot, "clients/python/tests")], {
      cwd: dir,
      env,
      timeout: startsProcessesTimeoutMs,
    }).catch((err: { stdout?: string; stderr?: string }) => {
      throw new Error(`pytest failed:\n${err.stdout}\n${err.stderr}`);
    });
    expect(stdout).toMatch(/\d+ passed/);
    expect(stdout).not.toMatch(/failed|error|skipped/);
  }, startsProcessesTimeoutMs);

  it("runs every example of docs/how-to/python.md", async () => {
    const examples = await docExamples("docs/how-to/python.md", "python");
    expect(examples.length).toBeGreaterThan(0);
    const outputs: string[] = [];
    for (const [i, code] of examples.entries()) {
      const file = path.join(dir, `example-${i}.py`);
      await writeFile(file, code);
      outputs.push((await run(venvPython, [file], { cwd: dir, env, timeout: 60_000 })).stdout);
    }
    const lines = outputs.join("").split("\n");
    expect(lines).toEqual(
      expect.arrayContaining([
        "memory: The user is training for a marathon in April",
        "memory: The user wants distances in kilometres",
        "top: The user is training for a marathon in April via keyword",
        "receipt: keyword returned 1",
        "audit: marathon",
        "error: 400 invalid_request type enum",
        "rate limit: True True",
        "async: The user is training for a marathon in April True",
        "imported: release-notes version 1",
        "found: release-notes",
        "exported: ['SKILL.md', 'template.md']",
      ]),
    );
  }, startsProcessesTimeoutMs);

  it("generates the gRPC stubs with Debian's protoc and runs the example of docs/how-to/python-grpc.md", async () => {
    const [, generate] = await docExamples("docs/how-to/python-grpc.md", "sh");
    const [example] = await docExamples("docs/how-to/python-grpc.md", "python");
    const out = path.join(dir, "grpc");
    await run("sh", ["-c", generate!], { cwd: repoRoot, env: { PATH: process.env.PATH ?? "", OUT: out } });
    await writeFile(path.join(dir, "grpc-example.py"), example!);
    // A key of its own: the pytest suite's memories would be recalled too.
    const key = await server.createKey("python-grpc", "agent");
    const { stdout } = await run(python, [path.join(dir, "grpc-example.py")], { env: { ...env, AGENTMEM_API_KEY: key, PYTHONPATH: out }, timeout: 60_000 });
    expect(stdout).toContain("recalled: ['The user prefers dark mode']");
    expect(stdout).toContain("error: NOT_FOUND not_found {'id': 'mem_missing'}");
  }, startsProcessesTimeoutMs);
});
