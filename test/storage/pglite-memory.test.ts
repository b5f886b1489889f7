import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { openDatabase } from "../../src/db/database.js";

const MB = 1024 * 1024;

// Creating a PGlite data directory grew the creating instance's wasm memory to ~600 MB, which a wasm memory
// never returns: it stayed in the server (630 MB of external memory) until a garbage collection happened to
// run, which an idle server never does. A worker thread creates it now, and its memory goes with the thread.
it("a new PGlite data directory costs the server only the memory of the instance that serves it", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-pglite-"));
  const rssBefore = process.memoryUsage().rss;
  const db = await openDatabase({ dataDir: dir, poolSize: 1 });
  try {
    const { rss, external } = process.memoryUsage();
    expect(external).toBeLessThan(400 * MB);
    expect(rss - rssBefore).toBeLessThan(500 * MB);
    expect(await db.query("select count(*)::int as n from pg_database where datname = 'postgres'")).toEqual([{ n: 1 }]);
  } finally {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  }
});
