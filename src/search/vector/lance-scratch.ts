import { mkdirSync, readdirSync, rmSync } from "node:fs";
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
    if (running === 0 && scratch) removeLeftovers(scratch);
  }
}

/**
 * The builds' shuffle directories: Rust's tempfile names them ".tmp…", and they hold shuffle_* files. Other
 * temp directories are left alone (a LanceDB connection makes an empty one when it opens).
 */
function removeLeftovers(dir: string): void {
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(".tmp")) continue;
    const leftover = path.join(dir, name);
    const files = (() => {
      try {
        return readdirSync(leftover);
      } catch {
        return []; // a file, or gone
      }
    })();
    if (files.some((f) => f.startsWith("shuffle_"))) rmSync(leftover, { recursive: true, force: true });
  }
}
