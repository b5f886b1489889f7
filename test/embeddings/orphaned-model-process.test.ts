import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const parentScript = fileURLToPath(new URL("./orphaned-model-process.mjs", import.meta.url));

/** Running, as opposed to exited: an orphan that has exited may stay a zombie until its new parent reaps it. */
const running = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
};

describe("a model process whose server died", () => {
  it("exits quietly when its reply finds the channel closed, without a write EPIPE stack", async () => {
    // The parent is SIGKILLed right after handing over a batch; the model process inherits its stdout and
    // stderr, so "close" comes once both have exited and everything they printed has been read.
    const parent = spawn(process.execPath, [parentScript, "64"], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    parent.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    parent.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const [, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => parent.on("close", (code, sig) => resolve([code, sig])));
    expect(signal).toBe("SIGKILL");
    const childPid = Number(stdout.split("\n")[0]);
    expect(childPid).toBeGreaterThan(0);
    expect(running(childPid)).toBe(false);
    expect(stderr).not.toContain("EPIPE");
    expect(stderr).not.toMatch(/Error/);
  });
});
