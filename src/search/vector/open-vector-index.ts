import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import type { Config } from "../../config.js";
import type { Database } from "../../db/database.js";
import { metadataTerms } from "../../memories/metadata-terms.js";
import { defaultReadConsistencySeconds, isObjectStore } from "./lance-consistency.js";
import type { LanceConnectionOptions } from "./lance-session.js";
import type { VectorIndex } from "./vector-index.js";

/** How the database records an index kept in a per-process temporary directory (DATA_DIR=memory://). */
export const ephemeralLocation = "ephemeral";

type LanceConfig = Pick<Config, "LANCEDB_URI" | "DATA_DIR">;
export type IndexConfig = Pick<
  Config,
  | "VECTOR_BACKEND"
  | "LANCEDB_URI"
  | "DATA_DIR"
  | "LANCEDB_READ_CONSISTENCY_MS"
  | "LANCEDB_INDEX_CACHE_BYTES"
  | "LANCEDB_METADATA_CACHE_BYTES"
  | "LANCEDB_HELD_VECTORS_BYTES"
  | "LANCEDB_WRITERS"
  | "lanceStorageOptions"
>;

/**
 * Where this node's LanceDB index lives, as the database records it: an object store URI as given, a
 * directory resolved to an absolute path (so ./data/lance and /srv/agentmem/data/lance compare equal),
 * or `ephemeral` for the temporary directory of an in-memory DATA_DIR.
 */
export function lanceLocationOf(config: LanceConfig): string {
  if (config.LANCEDB_URI) return isObjectStore(config.LANCEDB_URI) ? config.LANCEDB_URI : path.resolve(config.LANCEDB_URI);
  if (config.DATA_DIR.startsWith("memory://")) return ephemeralLocation;
  return path.resolve(config.DATA_DIR, "lance");
}

/**
 * Which nodes write the index (LANCEDB_WRITERS). On an object store only the maintainer does by default:
 * LanceDB commits a version by putting its manifest only if absent, and a store that ignores that
 * condition keeps the last of two concurrent commits and loses the other's rows (s3rver 3.7.1, 2026-11-28,
 * 2-core AMD EPYC, Node 20: three processes adding 30 rows each at once kept 36 to 47 of 90;
 * `npx tsx bench/object-store-commits.ts`). pgvector is written through Postgres by every node.
 */
export function indexWritersOf(config: IndexConfig): "maintainer" | "every-node" {
  if (config.VECTOR_BACKEND !== "lancedb") return "every-node";
  return config.LANCEDB_WRITERS ?? (isObjectStore(lanceLocationOf(config)) ? "maintainer" : "every-node");
}

/**
 * How long another node's write to the index may stay unseen by this node's reads: a LanceDB read first
 * looks for newer versions once its last look is older than this (LANCEDB_READ_CONSISTENCY_MS, by default
 * 0 for a directory and 1 s for object storage, see defaultReadConsistencySeconds). pgvector is read
 * from Postgres and always current.
 */
export function readConsistencyMsOf(config: IndexConfig): number {
  if (config.VECTOR_BACKEND !== "lancedb") return 0;
  return config.LANCEDB_READ_CONSISTENCY_MS ?? defaultReadConsistencySeconds(lanceLocationOf(config)) * 1000;
}

/**
 * Opens a LanceDB collection at this node's location with its read-consistency bound and the shared
 * cache session; for an in-memory DATA_DIR, in a temporary directory that close() removes.
 */
export async function openAtLanceLocation<T extends { close(): Promise<void> }>(
  config: IndexConfig,
  scratchPrefix: string,
  open: (connection: LanceConnectionOptions) => Promise<T>,
): Promise<T> {
  const { lanceSession } = await import("./lance-session.js");
  const session = lanceSession({ index: config.LANCEDB_INDEX_CACHE_BYTES, metadata: config.LANCEDB_METADATA_CACHE_BYTES });
  const options = {
    readConsistencySeconds: readConsistencyMsOf(config) / 1000,
    session,
    heldVectorsBytes: config.LANCEDB_HELD_VECTORS_BYTES,
    storageOptions: config.lanceStorageOptions,
    serialCommits: indexWritersOf(config) === "maintainer",
  };
  const location = lanceLocationOf(config);
  if (location !== ephemeralLocation) return open({ uri: location, ...options });
  const scratch = await mkdtemp(path.join(os.tmpdir(), scratchPrefix));
  const index = await open({ uri: scratch, ...options });
  return {
    ...index,
    async close() {
      await index.close();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

/**
 * Opens the configured vector index. pgvector lives in `db` (opened with `vector: true` on PGlite);
 * LanceDB lives at LANCEDB_URI or DATA_DIR/lance (see openAtLanceLocation).
 */
export async function openVectorIndex(config: IndexConfig, db: Database, dimensions: number): Promise<VectorIndex> {
  // For index rows written before the index kept metadata terms (backfillMetadataTerms).
  const metadataTermsOf = async (ids: string[]) => {
    const rows = await db.query<{ id: string; metadata: JsonObject }>("select id, metadata from memories where id = any($1::text[])", [ids]);
    return new Map(rows.map((r) => [r.id, metadataTerms(r.metadata)]));
  };
  if (config.VECTOR_BACKEND === "pgvector") {
    const { openPgvectorIndex } = await import("./pgvector-index.js");
    return openPgvectorIndex(db, dimensions, metadataTermsOf);
  }
  // Imported on demand: the LanceDB native module is large and unused with pgvector.
  const { openLanceIndex } = await import("./lancedb-index.js");
  return openAtLanceLocation(config, "agentmem-lance-", (connection) => openLanceIndex({ ...connection, dimensions, metadataTermsOf }));
}
