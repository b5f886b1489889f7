// Creates PGlite clusters in a worker thread (src/db/pglite.ts). Running initdb grows the wasm memory of
// the instance that does it to ~600 MB, which a wasm memory never returns; in a worker that memory goes
// with the thread instead of staying in the server until a garbage collection happens to run.
//
// A new cluster is a copy of a template: the files of one fresh initdb, dumped to `templatePath` and
// reused, because loading them costs about a third of the CPU of initdb. `location` "memory://" asks for
// the template itself (posted back); a directory gets a cluster loaded from it.
import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { loadTemplate } from "./pglite-template.mjs";

const { location, templatePath } = workerData;

async function newTemplate() {
  const pg = await PGlite.create("memory://");
  const bytes = new Uint8Array(await (await pg.dumpDataDir("none")).arrayBuffer());
  await pg.close();
  // Written aside and renamed, so a reader never sees half a template; a cache that cannot be written
  // (read-only node_modules) only costs the next cluster an initdb of its own.
  const partial = `${templatePath}.${randomBytes(6).toString("hex")}.partial`;
  try {
    await mkdir(path.dirname(templatePath), { recursive: true });
    await writeFile(partial, bytes);
    await rename(partial, templatePath);
  } catch {
    await rm(partial, { force: true }).catch(() => undefined);
  }
  return bytes;
}

async function loadInto(directory, template) {
  const pg = await PGlite.create(directory, { loadDataDir: new Blob([template]) });
  await pg.close();
}

if (location === "memory://") {
  const bytes = await newTemplate();
  parentPort.postMessage(bytes, [bytes.buffer]);
} else {
  // A second load (of a new template) overwrites what a failed one wrote.
  await loadTemplate(templatePath, newTemplate, (template) => loadInto(location, template));
}
