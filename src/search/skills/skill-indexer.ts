import type { FastifyBaseLogger } from "fastify";
import type { Database } from "../../db/database.js";
import type { Embedder } from "../../embeddings/embedder.js";
import { loadSkills } from "../../skills/skill-store.js";
import { embeddedText, keywordText } from "../../skills/skill-text.js";
import { coalescedRuns } from "../coalesced-runs.js";
import { reconcileInPages, reconcilePageSize } from "../reconcile.js";
import { everyNodeWrites, onWriterRole, reconcileAndDrain } from "../writer-role.js";
import { indexedContainers, type SkillVectorIndex } from "./skill-vector-index.js";

// Postgres is the truth; the skills collection follows it through skill_index_outbox, written in the
// same transaction as every skill write. Writers also drain right away (see SkillService), so a
// skill is searchable when its write answers; a failure there leaves the job queued for the poller.

const batchSize = 64;
const pollMs = 1000;
const optimizeEvery = 200;

/**
 * `maintains`: whether this node may optimise the index now; `writes`: whether it may write it at all (as
 * for memories, see createIndexer). A skill written on a node that does not write is searchable once the
 * writer's poll has indexed it and the reading node's view has caught up.
 */
export function createSkillIndexer(
  db: Database,
  index: SkillVectorIndex,
  embedder: Embedder,
  log: FastifyBaseLogger,
  maintains: () => boolean = () => true,
  writes: () => boolean = everyNodeWrites,
) {
  let writesSinceOptimize = 0;
  let timer: NodeJS.Timeout | undefined;
  let starting: Promise<void> | undefined;
  let stopped = false;

  async function step(): Promise<number> {
    if (!writes()) return 0;
    const jobs = await db.query<{ seq: string; skill_id: string }>("select seq, skill_id from skill_index_outbox order by seq limit $1", [batchSize]);
    if (jobs.length === 0) return 0;
    const ids = [...new Set(jobs.map((j) => j.skill_id))];
    const skills = await loadSkills(db, ids);
    const present = new Set(skills.map((s) => s.id));
    const vectors = skills.length > 0 ? await embedder.embed(skills.map(embeddedText)) : [];
    // Asked again after embedding, which can outlast the role.
    if (!writes()) return 0;
    await index.upsert(
      skills.map((s, i) => ({
        id: s.id,
        workspaceId: s.workspaceId,
        containers: indexedContainers(s.containers),
        tags: s.tags,
        maturity: s.maturity,
        state: s.state,
        marketplace: s.listingStatus === "listed",
        text: keywordText(s),
        vector: vectors[i]!,
      })),
    );
    const gone = ids.filter((id) => !present.has(id));
    if (gone.length > 0) await index.delete(gone);
    await db.query("delete from skill_index_outbox where seq = any($1::bigint[])", [jobs.map((j) => j.seq)]);
    writesSinceOptimize += ids.length;
    if (writesSinceOptimize >= optimizeEvery && maintains()) {
      writesSinceOptimize = 0;
      await index.optimize().catch((err: unknown) => log.warn({ err }, "skill index optimize failed; retried after the next writes"));
    }
    return jobs.length;
  }

  /** Indexes until the outbox is empty; a caller arriving during a run waits for a run that sees its job. */
  const runs = coalescedRuns(
    async () => {
      let total = 0;
      for (let n = await step(); n > 0 && !stopped; n = await step()) total += n;
      return total;
    },
    () => stopped,
  );
  const drain = runs.run;

  /** Background work stops with the indexer: once stop() has returned, nothing here touches storage again. */
  const drainInBackground = () => {
    if (stopped) return;
    drain().catch((err: unknown) => log.error({ err }, "skill indexing failed; queued skills stay queued and are retried"));
  };

  const reconcile = (pageSize = reconcilePageSize) =>
    reconcileInPages(db, index, { table: "skills", queueSql: "insert into skill_index_outbox (skill_id) select unnest($1::text[])" }, pageSize);

  const takeWriterRole = onWriterRole(writes, () => {
    starting = reconcileAndDrain(reconcile, drainInBackground, log, "skill index");
  });

  return {
    /** Indexes one batch of queued jobs; the number handled, 0 when the outbox is empty. */
    step,
    drain,
    /** Called after a committed write: indexes now and resolves when done; never throws. */
    async indexNow(): Promise<void> {
      if (stopped) return;
      await drain().catch((err: unknown) => log.warn({ err }, "skill indexing on write failed; the poller retries"));
    },
    /** Queues every skill the index lacks and drops vectors of skills that no longer exist. */
    reconcile,
    /** Polls for queued jobs; reconciles with storage on taking the writer role, as the memories' indexer does. */
    start(): void {
      timer = setInterval(() => {
        takeWriterRole();
        drainInBackground();
      }, pollMs);
      timer.unref();
      takeWriterRole();
    },
    /** Stops background work and waits for what is running (reconciliation, a drain) to end. */
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      await starting;
      await runs.settled();
    },
  };
}

export type SkillIndexer = ReturnType<typeof createSkillIndexer>;
