import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { startsProcessesTimeoutMs } from "../support/test-server.js";

const MB = 1024 * 1024;
const repoRoot = path.resolve(import.meta.dirname, "../..");

// Creating a PGlite data directory grew the creating instance's wasm memory to ~600 MB, which a wasm memory
// never returns: it stayed in the server (630 MB of external memory) until a garbage collection happened to
// run, which an idle server never does. A worker thread creates it now, and its memory goes with the thread.
// Measured in a process of its own: the test files share processes, whose memory holds other files' data.
it("a new PGlite data directory costs the server only the memory of the instance that serves it", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-pglite-"));
  const script = path.join(dir, "open-new-directory.mts");
  await writeFile(
    script,
    `import { openDatabase } from ${JSON.stringify(path.join(repoRoot, "src/db/database.ts"))};
     const rssBefore = process.memoryUsage().rss;
     const db = await openDatabase({ dataDir: ${JSON.stringify(path.join(dir, "data"))}, poolSize: 1 });
     const { rss, external } = process.memoryUsage();
     const rows = await db.query("select count(*)::int as n from pg_database where datname = 'postgres'");
     await db.close();
     console.log(JSON.stringify({ grown: rss - rssBefore, external, rows }));`,
  );
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", script], { cwd: repoRoot, timeout: startsProcessesTimeoutMs - 10_000 });
    const measured = JSON.parse(stdout.trim().split("\n").at(-1)!) as { grown: number; external: number; rows: unknown };
    expect(measured.rows).toEqual([{ n: 1 }]);
    expect(measured.external).toBeLessThan(400 * MB);
    expect(measured.grown).toBeLessThan(500 * MB);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, startsProcessesTimeoutMs);
