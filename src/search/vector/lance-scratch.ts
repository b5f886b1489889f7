import { mkdirSync, rmSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

// LanceDB 0.37 leaves every vector index build's shuffle directory (".tmpXXXXXX", a copy of every vector
// of the table: 196 MB for a build at 100k memories of 512 dimensions) in the temp directory, and nothing
// removes it (lance-format/lance#8992, fixed in a Lance newer than this LanceDB's). So the process gives
// LanceDB a temp directory of its own and empties it of such directories whenever no index work runs.
let scratch: string | undefined;
let running = 0;

// Named by host and process: a temp directory shared by containers (each with its own process ids) holds
// each host's own, and only a process of the same host can tell whether the owner still runs.
const scratchName = /^agentmem-lance-scratch-(.+)-(\d+)$/;
const scratchNameOf = (host: string, pid: number) => `agentmem-lance-scratch-${host}-${pid}`;

/** Points this process's temp directory (TMPDIR, which LanceDB's native code reads) at a directory of its own. */
export function useLanceScratch(): void {
  if (scratch) return;
  const tmp = os.tmpdir();
  const dir = path.join(tmp, scratchNameOf(os.hostname(), process.pid));
  mkdirSync(dir, { recursive: true });
  process.env.TMPDIR = dir;
  scratch = dir;
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  // The exit handler never runs in a process killed by a signal (SIGKILL, the OOM killer, a test runner
  // ending its workers): its scratch, with any build's shuffle files, stays until a later process removes it.
  removeOrphanedScratch(tmp).catch(() => undefined);
}

/** Whether a process with this id runs (one of another user's answers EPERM). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes the scratch directories in `tmp` of this host's processes that no longer run; returns their names. */
export async function removeOrphanedScratch(tmp: string, host = os.hostname()): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(tmp)) {
    const match = scratchName.exec(name);
    if (!match || match[1] !== host || isRunning(Number(match[2]))) continue;
    await rm(path.join(tmp, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/** Runs LanceDB index work (optimize, index builds); when none is left running, removes what the builds left behind. */
export async function lanceIndexWork<T>(work: () => Promise<T>): Promise<T> {
  running++;
  try {
    return await work();
  } finally {
    running--;
    // A failed clean-up is tried again after the next index work; it never fails this one.
    if (running === 0 && scratch) await removeLeftovers(scratch).catch(() => undefined);
  }
}

/**
 * The builds' shuffle directories: Rust's tempfile names them ".tmp…", and they hold shuffle_* files. Other
 * temp directories are left alone (a LanceDB connection makes an empty one when it opens). Each is removed
 * only while no index work runs, so none in use is; asynchronously, as they can hold gigabytes.
 */
async function removeLeftovers(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (running > 0) return; // new index work started: it cleans up when it ends
    if (!name.startsWith(".tmp")) continue;
    const leftover = path.join(dir, name);
    const files = await readdir(leftover).catch(() => [] as string[]); // a file, or gone
    if (running === 0 && files.some((f) => f.startsWith("shuffle_"))) await rm(leftover, { recursive: true, force: true });
  }
}
