import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { removeOrphanedScratch } from "../../src/search/vector/lance-scratch.js";

/** The id of a process that has exited. */
async function exitedPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await once(child, "exit");
  return child.pid!;
}

describe("LanceDB scratch directories", () => {
  let tmp: string | undefined;
  afterEach(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it("removes those of this host's processes that no longer run, and nothing else", async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "lance-scratch-test-"));
    const dead = await exitedPid();
    const host = "node-a.example";
    const orphan = `agentmem-lance-scratch-${host}-${dead}`;
    await mkdir(path.join(tmp, orphan, ".tmpAbC123"), { recursive: true });
    await writeFile(path.join(tmp, orphan, ".tmpAbC123", "shuffle_0.bin"), "vectors");
    const kept = [
      `agentmem-lance-scratch-${host}-${process.pid}`, // a running process's
      `agentmem-lance-scratch-node-b.example-${dead}`, // another host's: its process ids are not ours to check
      `agentmem-lance-${dead}`, // not a scratch directory's name
      `agentmem-lance-scratch-${host}-x${dead}`,
    ];
    for (const name of kept) await mkdir(path.join(tmp, name));

    expect(await removeOrphanedScratch(tmp, host)).toEqual([orphan]);
    expect((await readdir(tmp)).sort()).toEqual([...kept].sort());
    expect(await removeOrphanedScratch(tmp, host)).toEqual([]);
  });
});
