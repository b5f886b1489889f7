import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { once } from "node:events";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { PGlite, type PGliteOptions } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import type { Database, Sql } from "./database.js";
import { vacuumGrownTables } from "./pglite-maintenance.js";

export interface PgliteOptions {
  /** Loads pgvector. */
  vector?: boolean;
  /** PostgreSQL's shared_buffers. PGlite touches all of it at start, so every byte of it is resident. */
  sharedBuffersBytes?: number;
}

// PGlite's own start parameters (PGlite.defaultStartParams is not exported from the package root):
// single-user mode, no fsync, no parallel workers.
const pgliteStartParams = [
  "--single", "-F", "-O", "-j",
  "-c", "search_path=public",
  "-c", "exit_on_error=false",
  "-c", "log_checkpoints=false",
  "-c", "max_worker_processes=0",
  "-c", "max_parallel_workers=0",
  "-c", "max_parallel_workers_per_gather=0",
  "-c", "io_method=sync",
  "-c", "max_parallel_maintenance_workers=0",
];

/** Embedded PostgreSQL in dataDir/pg, or in memory for "memory://". */
export async function openPglite(dataDir: string, options: PgliteOptions = {}): Promise<Database> {
  const settings: PGliteOptions = {
    ...(options.vector ? { extensions: { vector } } : {}),
    ...(options.sharedBuffersBytes === undefined
      ? {}
      : { startParams: [...pgliteStartParams, "-c", `shared_buffers=${Math.floor(options.sharedBuffersBytes / 1024)}kB`] }),
  };
  let location = dataDir;
  if (!dataDir.startsWith("memory://")) {
    location = path.resolve(dataDir, "pg");
    await mkdir(location, { recursive: true });
    if (!existsSync(path.join(location, "PG_VERSION"))) await createDataDirectory(location);
  }
  const pg = await PGlite.create(location, settings);
  const wrap = (q: Pick<PGlite, "query">): Sql => ({
    query: async <Row>(text: string, params?: readonly unknown[]) =>
      (await q.query<Row>(text, params as unknown[] | undefined)).rows,
  });
  return {
    kind: "pglite",
    ...wrap(pg),
    transaction: (fn) => pg.transaction((tx) => fn(wrap(tx))),
    ping: async () => {
      await pg.query("select 1");
    },
    maintain: async () => {
      await vacuumGrownTables(wrap(pg));
    },
    close: () => pg.close(),
  };
}

/** Creates a data directory in a worker thread, whose ~600 MB of wasm memory is freed when it exits. */
async function createDataDirectory(location: string): Promise<void> {
  const worker = new Worker(new URL("./pglite-create-worker.mjs", import.meta.url), { workerData: { location }, execArgv: [] });
  const failed = once(worker, "error").then(([err]) => {
    throw new Error(`creating the PGlite data directory ${location} failed: ${(err as Error).message}`);
  });
  const [code] = (await Promise.race([once(worker, "exit"), failed])) as [number];
  if (code !== 0) throw new Error(`creating the PGlite data directory ${location} failed: its worker exited with code ${code}`);
}
