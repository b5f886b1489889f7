import { existsSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { once } from "node:events";
import { createRequire } from "node:module";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { PGlite, type PGliteOptions } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import type { Database, Sql } from "./database.js";
import { vacuumGrownTables } from "./pglite-maintenance.js";
import { loadTemplate } from "./pglite-template.mjs";

export interface PgliteOptions {
  /** Loads pgvector. */
  vector?: boolean;
  /** PostgreSQL's shared_buffers. PGlite touches all of it at start, so every byte of it is resident. */
  sharedBuffersBytes?: number;
  /** Where new clusters are copied from (made on first use); tests point it elsewhere. */
  templatePath?: string;
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

// PGlite's own bytea parser builds the bytes with a parseInt per hex pair: reading 256 indexing jobs'
// vectors (2 KiB each) took 45 ms of the event loop, 3.8 ms decoded by Buffer (as pg does).
const byteaOid = 17;
const parseBytea = (hex: string): Uint8Array => Buffer.from(hex.slice(2), "hex");

/** Embedded PostgreSQL in dataDir/pg, or in memory for "memory://". */
export async function openPglite(dataDir: string, options: PgliteOptions = {}): Promise<Database> {
  const settings: PGliteOptions = {
    parsers: { [byteaOid]: parseBytea },
    ...(options.vector ? { extensions: { vector } } : {}),
    ...(options.sharedBuffersBytes === undefined
      ? {}
      : { startParams: [...pgliteStartParams, "-c", `shared_buffers=${Math.floor(options.sharedBuffersBytes / 1024)}kB`] }),
  };
  const templatePath = options.templatePath ?? defaultTemplatePath;
  let pg: PGlite;
  if (dataDir.startsWith("memory://")) {
    pg = await openInMemory(settings, templatePath);
  } else {
    const location = path.resolve(dataDir, "pg");
    await mkdir(location, { recursive: true });
    if (!existsSync(path.join(location, "PG_VERSION"))) await runCreateWorker(location, templatePath);
    pg = await PGlite.create(location, settings);
  }
  const wrap = (q: Pick<PGlite, "query">): Sql => ({
    // PGlite's query() has no named statements: options.prepare does not apply.
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

// New clusters are copies of a template, the files of one fresh initdb (src/db/pglite-create-worker.mjs),
// kept next to the installed packages and named by PGlite's version: loading them costs 0.6 s of CPU
// where initdb costs 1.7 (3.4 in the test suite's parallel files, which open 70 in-memory databases).
const defaultTemplatePath = (() => {
  const packageDir = path.resolve(path.dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite")), "..");
  const { version } = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8")) as { version: string };
  return path.resolve(packageDir, "../../.cache/agentmem", `pglite-${version}-cluster.tar`);
})();

function openInMemory(settings: PGliteOptions, templatePath: string): Promise<PGlite> {
  return loadTemplate(
    templatePath,
    () => newTemplate(templatePath),
    (template) => PGlite.create("memory://", { ...settings, loadDataDir: new Blob([template]) }),
  );
}

async function newTemplate(templatePath: string): Promise<Uint8Array> {
  const template = await runCreateWorker("memory://", templatePath);
  if (!(template instanceof Uint8Array)) throw new Error("creating a PGlite cluster template failed: its worker posted none");
  return template;
}

/**
 * Runs the cluster-creating worker for a data directory, or for "memory://" the template (what it posts);
 * a worker thread, whose ~600 MB of wasm memory from initdb is freed when it exits.
 */
async function runCreateWorker(location: string, templatePath: string): Promise<unknown> {
  const worker = new Worker(new URL("./pglite-create-worker.mjs", import.meta.url), { workerData: { location, templatePath }, execArgv: [] });
  let posted: unknown;
  worker.on("message", (message) => (posted = message));
  const failed = once(worker, "error").then(([err]) => {
    throw new Error(`creating a PGlite cluster in ${location} failed: ${(err as Error).message}`);
  });
  const [code] = (await Promise.race([once(worker, "exit"), failed])) as [number];
  if (code !== 0) throw new Error(`creating a PGlite cluster in ${location} failed: its worker exited with code ${code}`);
  return posted;
}
