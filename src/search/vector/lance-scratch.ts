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

/** Points this process's temp directory (TMPDIR, which LanceDB's native code reads) at a directory of its own. */
export function useLanceScratch(): void {
  if (scratch) return;
  const dir = path.join(os.tmpdir(), `agentmem-lance-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  process.env.TMPDIR = dir;
  scratch = dir;
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
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
