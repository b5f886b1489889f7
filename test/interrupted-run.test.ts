import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";

// An interrupted `npm test` (Ctrl-C, a supervisor, a CI timeout) leaves no PostgreSQL server and no
// temporary directory behind: a run of the suite's set-up around one test that waits, interrupted.

const repoRoot = new URL("..", import.meta.url).pathname;
const vitest = path.join(repoRoot, "node_modules", "vitest", "vitest.mjs");
const reports = mkdtempSync(path.join(os.tmpdir(), "agentmem-interrupted-"));
afterAll(() => rmSync(reports, { recursive: true, force: true }));

const refusesConnections = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(false)));
    socket.once("error", () => resolve(true));
  });

async function reportOf(file: string, child: ReturnType<typeof spawn>): Promise<{ tmpdir: string; postgresUrl: string }> {
  let exited = false;
  child.once("exit", () => (exited = true));
  while (!existsSync(file)) {
    if (exited) throw new Error("the run exited before its test started");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return JSON.parse(readFileSync(file, "utf8"));
}

it.each(["SIGINT", "SIGTERM"] as const)("stops its PostgreSQL server and removes its temporary directories when interrupted by %s", async (signal) => {
  const report = path.join(reports, `${signal}.json`);
  const child = spawn(process.execPath, [vitest, "run", "--config", "test/support/interrupted-run/vitest.config.ts"], {
    cwd: repoRoot,
    env: { ...process.env, TEST_DATABASE_URL: "", INTERRUPTED_RUN_REPORT: report },
    stdio: "ignore",
  });
  const exited = once(child, "exit");
  try {
    const { tmpdir, postgresUrl } = await reportOf(report, child);
    const port = Number(new URL(postgresUrl).port);
    expect(existsSync(tmpdir)).toBe(true);
    expect(await refusesConnections(port)).toBe(false);

    child.kill(signal);
    await exited;
    expect(existsSync(tmpdir)).toBe(false);
    expect(await refusesConnections(port)).toBe(true);
  } finally {
    // A failed check leaves no run waiting: SIGTERM, which the run answers by cleaning up.
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
  }
});
