import type { Database } from "../../db/database.js";
import { openAtLanceLocation, type IndexConfig } from "../vector/open-vector-index.js";
import type { SkillVectorIndex } from "./skill-vector-index.js";

/** Opens the skills collection on the configured backend, where the memories' vector index lives. */
export async function openSkillIndex(config: IndexConfig, db: Database, dimensions: number): Promise<SkillVectorIndex> {
  if (config.VECTOR_BACKEND === "pgvector") {
    const { openPgvectorSkillIndex } = await import("./pgvector-skill-index.js");
    return openPgvectorSkillIndex(db, dimensions);
  }
  const { openLanceSkillIndex } = await import("./lancedb-skill-index.js");
  return openAtLanceLocation(config, "agentmem-lance-skills-", (connection) => openLanceSkillIndex({ ...connection, dimensions }));
}
