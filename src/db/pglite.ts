import { mkdir } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import type { Database, Sql } from "./database.js";
import { vacuumGrownTables } from "./pglite-maintenance.js";

/** Embedded PostgreSQL in dataDir/pg, or in memory for "memory://"; `vector` loads pgvector. */
export async function openPglite(dataDir: string, options: { vector?: boolean } = {}): Promise<Database> {
  let location = dataDir;
  if (!dataDir.startsWith("memory://")) {
    location = path.resolve(dataDir, "pg");
    await mkdir(location, { recursive: true });
  }
  const pg = await PGlite.create(location, options.vector ? { extensions: { vector } } : {});
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
