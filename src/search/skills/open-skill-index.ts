import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Config } from "../../config.js";
import type { Database } from "../../db/database.js";
import { readConsistencyMsOf } from "../vector/open-vector-index.js";
import type { SkillVectorIndex } from "./skill-vector-index.js";

/** Opens the skills collection on the configured backend, where the memories' vector index lives. */
export async function openSkillIndex(
  config: Pick<
    Config,
    "VECTOR_BACKEND" | "LANCEDB_URI" | "DATA_DIR" | "LANCEDB_READ_CONSISTENCY_MS" | "LANCEDB_INDEX_CACHE_BYTES" | "LANCEDB_METADATA_CACHE_BYTES"
  >,
  db: Database,
  dimensions: number,
): Promise<SkillVectorIndex> {
  if (config.VECTOR_BACKEND === "pgvector") {
    const { openPgvectorSkillIndex } = await import("./pgvector-skill-index.js");
    return openPgvectorSkillIndex(db, dimensions);
  }
  const { openLanceSkillIndex } = await import("./lancedb-skill-index.js");
  const { lanceSession } = await import("../vector/lance-session.js");
  const session = lanceSession({ index: config.LANCEDB_INDEX_CACHE_BYTES, metadata: config.LANCEDB_METADATA_CACHE_BYTES });
  const readConsistencySeconds = readConsistencyMsOf(config) / 1000;
  if (config.LANCEDB_URI) return openLanceSkillIndex({ uri: config.LANCEDB_URI, dimensions, readConsistencySeconds, session });
  if (!config.DATA_DIR.startsWith("memory://")) {
    return openLanceSkillIndex({ uri: path.resolve(config.DATA_DIR, "lance"), dimensions, readConsistencySeconds, session });
  }
  const scratch = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-skills-"));
  const index = await openLanceSkillIndex({ uri: scratch, dimensions, readConsistencySeconds, session });
  return {
    ...index,
    async close() {
      await index.close();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}
