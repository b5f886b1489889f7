import { SingleBar } from "cli-progress";
import { pino } from "pino";
import { loadConfig } from "../config.js";
import { openDatabase } from "../db/database.js";
import { migrate } from "../db/migrations.js";
import { createEmbedder } from "../embeddings/create-embedder.js";
import { checkLanceLocation, describeModel, readIndexState, recordLanceLocation, sameModel, writeIndexState } from "../search/index-state.js";
import { createIndexer } from "../search/indexer.js";
import { openSkillIndex } from "../search/skills/open-skill-index.js";
import { createSkillIndexer } from "../search/skills/skill-indexer.js";
import { lanceLocationOf, openVectorIndex } from "../search/vector/open-vector-index.js";

/**
 * Re-embeds every memory and every skill with the configured model. Resumable: each is queued in its
 * collection's outbox once, and the index stays marked "reindexing" (the server refuses to start) until
 * both queues are drained, so running it again after an interruption continues where it stopped.
 */
export async function reindex(force: boolean): Promise<void> {
  const config = loadConfig();
  const db = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    poolSize: 2,
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
    vector: config.VECTOR_BACKEND === "pgvector",
  });
  const log = pino({ level: "warn" });
  try {
    await migrate(db);
    const embedder = await createEmbedder(config);
    const lanceLocation = config.VECTOR_BACKEND === "lancedb" ? lanceLocationOf(config) : undefined;
    // Without --force, rebuilding an index the servers do not search would change nothing they see.
    if (lanceLocation !== undefined && !force) {
      await checkLanceLocation(db, lanceLocation, (await readIndexState(db))?.backend).catch(async (err: unknown) => {
        await embedder.close();
        throw err;
      });
    }
    const vectors = await openVectorIndex(config, db, embedder.info.dimensions);
    const skillIndex = await openSkillIndex(config, db, embedder.info.dimensions);
    try {
      const state = await readIndexState(db);
      const resuming = state?.status === "reindexing" && sameModel(state, embedder.info);
      const upToDate = state?.status === "ready" && sameModel(state, embedder.info) && state.backend === vectors.kind;
      if (upToDate && !force) {
        console.log(`the vector index already holds ${describeModel(embedder.info)} embeddings; --force rebuilds it`);
        return;
      }
      if (!resuming) {
        await db.transaction(async (tx) => {
          await writeIndexState(tx, embedder.info, vectors.kind, "reindexing");
          // Vectors that writes left in queued jobs come from the previous model.
          await tx.query("update index_outbox set vector = null where vector is not null");
          await tx.query("insert into index_outbox (memory_id) select id from memories");
          await tx.query("insert into skill_index_outbox (skill_id) select id from skills");
        });
      }
      const [counts] = await db.query<{ memories: number; skills: number }>(
        "select (select count(*)::int from index_outbox where indexed_at is null) as memories, (select count(*)::int from skill_index_outbox) as skills",
      );
      const { memories, skills } = counts!;
      console.log(`${resuming ? "resuming" : "starting"}: re-embedding with ${describeModel(embedder.info)} into ${vectors.kind}`);
      const bar = new SingleBar({ format: "reindex [{bar}] {percentage}% {value}/{total} jobs, {eta_formatted} left", noTTYOutput: true, notTTYSchedule: 2000 });
      bar.start(memories + skills, 0);
      const indexer = createIndexer(db, vectors, embedder, log);
      for (let done = await indexer.step(); done > 0; done = await indexer.step()) bar.increment(done);
      const skillIndexer = createSkillIndexer(db, skillIndex, embedder, log);
      for (let done = await skillIndexer.step(); done > 0; done = await skillIndexer.step()) bar.increment(done);
      bar.stop();
      const removed = (await indexer.reconcile()).removed + (await skillIndexer.reconcile()).removed;
      await vectors.optimize();
      await skillIndex.optimize();
      await writeIndexState(db, embedder.info, vectors.kind, "ready");
      if (lanceLocation !== undefined) await recordLanceLocation(db, lanceLocation);
      console.log(`done: ${memories} memory jobs and ${skills} skill jobs, ${removed} stale vectors removed`);
    } finally {
      await skillIndex.close();
      await vectors.close();
      await embedder.close();
    }
  } finally {
    await db.close();
  }
}
