// New PGlite clusters are copies of a template (see pglite-create-worker.mjs). Plain JavaScript, so the
// worker that loads templates into directories and src/db/pglite.ts (memory://, in process) share it.
import { readFile, rm } from "node:fs/promises";

/**
 * `load`s the template kept at `templatePath`, or one `make` writes there when there is none; a template
 * that does not load is replaced by a new one, loaded in its place.
 */
export async function loadTemplate(templatePath, make, load) {
  const cached = await readFile(templatePath).catch(() => undefined);
  try {
    return await load(cached ?? (await make()));
  } catch (err) {
    if (cached === undefined) throw err;
    await rm(templatePath, { force: true });
    return load(await make());
  }
}
