import type { FastifyBaseLogger } from "fastify";
import type { Sql } from "../../db/database.js";
import { eventLoopSlices, type EventLoopSlices } from "../../event-loop-slices.js";
import type { Embedder } from "../../embeddings/embedder.js";
import { ByteLru, entryOverheadBytes, stringBytes } from "../../embeddings/lru.js";
import { cosine } from "../../search/scoring.js";
import type { VectorHit, VectorIndex } from "../../search/vector/vector-index.js";
import type { JobVectorReader } from "../job-vectors.js";
import { findActiveMemories, latestContentJobs } from "../memory-store.js";
import type { Judge } from "./judge.js";
import { assessPair, type PairAssessment, type Verdict } from "./rules.js";
import { noStatement, statementOf, type Statement } from "./statement.js";
import { assessWithEarlier, type Subject } from "./within-batch.js";

// Finds what a write contradicts. Candidates are the active memories sharing a container with a new
// memory that are nearest by embedding (multi-vector searches of ten new memories each), and the nearest
// of the memories not indexed yet (one bounded Postgres read); the rules then decide each pair, and
// the judge, when configured, re-decides the doubtful ones. A per-memory keyword search of the index
// doubled the write cost at 100k memories (each BM25 query 4 to 17 ms), so words are matched only for
// pending memories without a vector.

export interface NewMemory {
  id: string;
  content: string;
  containers: string[];
}

export interface FoundContradiction {
  /** Index of the newer memory in the write. */
  newer: number;
  olderId: string;
  olderContent: string;
  /** Containers of the older memory: who may shadow it. */
  olderContainers: string[];
  score: number;
  reason: string;
  /** The rule that fired ("value", "attribute", "negation", …), or "judge" when the judge decided. */
  rule: string;
}

/** An older memory compared with a new one and left beside it: a near miss, not a contradiction. */
export interface KeptBeside {
  /** Index of the newer memory in the write. */
  newer: number;
  olderId: string;
  olderContent: string;
  /** Why it was kept, e.g. "an addition (\"also\"): likes of the user". */
  reason: string;
}

export interface FoundContradictions {
  contradictions: FoundContradiction[];
  keptBeside: KeptBeside[];
}

export interface FinderOptions {
  db: Sql;
  vectors: VectorIndex;
  /** Should cache by text (cachingEmbedder), so the indexer reuses the vectors computed here. */
  embedder: Embedder;
  judge: Judge | null;
  log: FastifyBaseLogger;
  /** Nearest memories taken from each search, per new memory. */
  candidates: number;
  /** The vectors of pending jobs, read once (shared with recall's pending read). */
  jobVectors: JobVectorReader;
  /** Milliseconds the rules run before letting other work on the event loop run (default defaultSliceMs). */
  sliceMs?: number;
}

/**
 * The rules judge statements (the labelled pairs are at most 62 characters). A longer memory is a
 * document: no rule is applied to it (the judge, when configured, still sees close pairs), which keeps a
 * write's work bounded: a batch of one hundred 16 KiB memories compared every pair in about 10 s.
 */
const maxStatementChars = 1_000;
/** Pairs at least this similar go to the judge even when no rule fired: likely the same subject. */
const judgeSimilarity = 0.8;
/** At most this many pairs per write go to the judge: the rules' updates, then their doubts, then the most similar. */
const judgeMaxPairs = 20;
/** Near misses reported per new memory, most similar first. */
const keptPerMemory = 3;
/**
 * New memories whose nearest neighbours one index search looks up. LanceDB scans for all the vectors of
 * a search at once, each scan holding its own batches of rows: searches of a whole write (100 vectors)
 * at four writes in flight took the server to over 2 GB at 10k memories, and glibc kept most of it after
 * they ended (see bench/README.md, Memory log). While recalls search, LanceDB's index splits them further.
 */
const searchVectors = 10;

// Memories still waiting for the index (the workspace's latest content jobs) are not found by its search
// yet. Their jobs carry the vectors their writes computed, so the nearest of them are found here by cosine,
// as the index would find them; a memory whose write could not embed is matched by words in Postgres
// instead (any word, ranked by ts_rank). Driven by the outbox and bounded, so the cost neither follows the
// container's size nor a bulk import's backlog. Matching every new memory's words against every pending
// memory in Postgres took 300 ms per write of 100 during a bulk ingest, on PGlite all of it on the event
// loop, where recalls waited for it; reading the vectors and comparing them here takes a tenth of that.
// Each job's vector is read once (jobVectorReader): read with every write, the pending jobs' vectors (up
// to 200 of 2 KiB) held single creates at 32 in flight on PGlite to 42 to 55 a second, against 61 to 67
// read once and 70 without the read.
const pendingLimit = 200;
const pendingJobsSql = `
select r.memory_id as id, m.containers, case when m.version = r.version then r.seq::text end as seq
from (${latestContentJobs("$1", String(pendingLimit))}) r
join memories m on m.id = r.memory_id
where m.workspace_id = $1 and m.state = 'active'`;
// The word matching runs over the few given memories only: left to the planner, PGlite switched at about
// 4,400 memories to the full-text index over the whole workspace, once per new memory (10 ms -> 9 s a batch).
const wordMatchSql = `
with pending as materialized (
  select m.id, m.tsv, m.containers from memories m
  where m.id = any($4::text[]) and m.workspace_id = $2 and m.state = 'active'
)
select i.idx, c.id
from jsonb_to_recordset($1::jsonb) as i(idx int, content text, containers text[], self text)
cross join lateral (select replace(plainto_tsquery('english', i.content)::text, ' & ', ' | ') as q) t
cross join lateral (
  select m.id from pending m
  where t.q <> '' and m.containers && i.containers and m.id <> i.self and m.tsv @@ t.q::tsquery
  order by ts_rank(m.tsv, t.q::tsquery) desc, m.id desc
  limit $3
) c`;

interface PendingMemory {
  id: string;
  containers: string[];
  vector: Float32Array | null;
}

interface Pair {
  newer: number;
  newerContent: string;
  olderId: string;
  olderContent: string;
  olderContainers: string[];
  cosine: number;
  verdict: Verdict | null;
  /** Why the detector left the older memory beside the new one, when it did. */
  kept: string | null;
  /** What the detector could not settle (the judge's to decide). */
  doubtful: string | null;
}

function assessed(assessment: PairAssessment | null): Pick<Pair, "verdict" | "kept" | "doubtful"> {
  return {
    verdict: assessment?.kind === "update" ? assessment.verdict : null,
    kept: assessment?.kind === "kept" ? assessment.reason : null,
    doubtful: assessment?.kind === "doubtful" ? assessment.reason : null,
  };
}

/** Why a pair without a verdict was left beside, or null when it says nothing worth reporting. */
function keptReason(p: Pair): string | null {
  if (p.kept) return p.kept;
  if (p.doubtful) return `maybe an update, not decided: ${p.doubtful}`;
  return p.cosine >= judgeSimilarity ? "similar, but no rule found an update" : null;
}

export type ContradictionFinder = (workspaceId: string, memories: readonly NewMemory[]) => Promise<FoundContradictions>;

/**
 * Statements read, by text, across writes: a stored memory is a candidate of many writes, and reading
 * one (tags, lemmas, frames) costs about 0.5 ms (2-core AMD EPYC, 2026-11).
 */
const statementCacheBytes = 8 * 1024 * 1024;

export function createContradictionFinder(opts: FinderOptions): ContradictionFinder {
  const statements = new ByteLru<string, Statement>(statementCacheBytes, (text) => 8 * stringBytes(text) + entryOverheadBytes);
  const statement = (text: string): Statement => {
    if (text.length > maxStatementChars) return noStatement;
    const known = statements.get(text);
    if (known) return known;
    const read = statementOf(text);
    statements.set(text, read);
    return read;
  };

  async function embed(memories: readonly NewMemory[]): Promise<Float32Array[] | null> {
    try {
      return await opts.embedder.embed(memories.map((m) => m.content));
    } catch (err) {
      opts.log.warn({ err }, "embedding for contradiction candidates failed; using keyword candidates only");
      return null;
    }
  }

  async function semantic(workspaceId: string, memories: readonly NewMemory[], vectors: Float32Array[] | null) {
    if (!vectors) return memories.map(() => new Map<string, number>());
    const containers = [...new Set(memories.flatMap((m) => m.containers))];
    try {
      const hits: VectorHit[][] = [];
      for (let i = 0; i < vectors.length; i += searchVectors) {
        hits.push(...(await opts.vectors.searchMany(vectors.slice(i, i + searchVectors), { workspaceId, containers }, opts.candidates)));
      }
      return hits.map((list) => new Map(list.map((h) => [h.id, h.similarity])));
    } catch (err) {
      opts.log.warn({ err }, "vector search for contradiction candidates failed; using keyword candidates only");
      return memories.map(() => new Map<string, number>());
    }
  }

  /**
   * Each new memory's candidates among the memories not indexed yet, with their cosine (null when matched
   * by words); states are re-checked below.
   */
  async function pending(
    workspaceId: string,
    memories: readonly NewMemory[],
    vectors: Float32Array[] | null,
    slices: EventLoopSlices,
  ): Promise<Map<string, number | null>[]> {
    const rows = await opts.db.query<{ id: string; containers: string[]; seq: string | null }>(pendingJobsSql, [workspaceId]);
    const out = memories.map(() => new Map<string, number | null>());
    if (rows.length === 0) return out;
    // A vector of another length (another model's) is no vector to compare with.
    const dimensions = vectors?.[0]?.length ?? 0;
    const jobVector = dimensions > 0 ? await opts.jobVectors(rows.map((r) => r.seq)) : new Map<string, Float32Array | null>();
    const jobs: PendingMemory[] = rows.map((r) => {
      const vector = r.seq === null ? null : jobVector.get(r.seq);
      return { id: r.id, containers: r.containers, vector: vector?.length === dimensions ? vector : null };
    });
    const byWords = jobs.filter((j) => j.vector === null);
    for (let i = 0; vectors && i < memories.length; i++) {
      if (slices.due) await slices.pause();
      nearestPending(memories[i]!, vectors[i]!, jobs, opts.candidates, out[i]!);
    }
    if (byWords.length > 0) {
      const input = memories.map((m, idx) => ({ idx, content: m.content, containers: m.containers, self: m.id }));
      const ids = byWords.map((j) => j.id);
      for (const r of await opts.db.query<{ idx: number; id: string }>(wordMatchSql, [JSON.stringify(input), workspaceId, opts.candidates, ids])) {
        if (!out[r.idx]!.has(r.id)) out[r.idx]!.set(r.id, null);
      }
    }
    return out;
  }

  async function judge(pairs: Pair[]): Promise<void> {
    if (!opts.judge) return;
    const priority = (p: Pair) => (p.verdict ? 2 : p.doubtful ? 1 : 0);
    const asked = pairs
      .filter((p) => p.verdict !== null || p.doubtful !== null || p.cosine >= judgeSimilarity)
      .sort((a, b) => priority(b) - priority(a) || b.cosine - a.cosine)
      .slice(0, judgeMaxPairs);
    if (asked.length === 0) return;
    const verdicts = await opts.judge(asked.map((p) => ({ older: p.olderContent, newer: p.newerContent })));
    if (!verdicts) return;
    asked.forEach((p, i) => {
      const v = verdicts[i];
      if (!v) return;
      const reason = `judge: ${v.reason || (v.contradiction ? "contradiction" : "no contradiction")}`;
      p.verdict = v.contradiction ? { rule: "judge", score: Math.max(p.verdict?.score ?? 0, 0.9), reason } : null;
      p.kept = v.contradiction ? null : reason;
      p.doubtful = null;
    });
  }

  // A write of 100 memories parses about 900 statements and compares about 5,700 pairs, about 100 ms of
  // CPU: in one go, the event loop went up to 196-229 ms without turning during an API ingest with
  // recalls; in slices, 59-97 ms.
  return async (workspaceId, memories) => {
    if (memories.length === 0) return { contradictions: [], keptBeside: [] };
    const slices = eventLoopSlices(opts.sliceMs);
    const vectors = await embed(memories);
    const [nearest, notIndexed] = await Promise.all([semantic(workspaceId, memories, vectors), pending(workspaceId, memories, vectors, slices)]);
    const batchIds = new Set(memories.map((m) => m.id));
    const candidateIds = [...new Set([...nearest.flatMap((m) => [...m.keys()]), ...notIndexed.flatMap((m) => [...m.keys()])])].filter((id) => !batchIds.has(id));
    const stored = new Map((await findActiveMemories(opts.db, workspaceId, candidateIds)).map((m) => [m.id, m]));

    const pairs: Pair[] = [];
    for (const [newer, memory] of memories.entries()) {
      if (slices.due) await slices.pause();
      const ids = new Set([...nearest[newer]!.keys(), ...notIndexed[newer]!.keys()]);
      for (const id of ids) {
        const older = stored.get(id);
        if (!older || !older.containers.some((c) => memory.containers.includes(c))) continue;
        const similarity = nearest[newer]!.get(id) ?? notIndexed[newer]!.get(id) ?? 0;
        pairs.push({
          newer,
          newerContent: memory.content,
          olderId: id,
          olderContent: older.content,
          olderContainers: older.containers,
          cosine: similarity,
          ...assessed(assessPair(statement(older.content), statement(memory.content), similarity)),
        });
      }
    }
    const subjects: Subject[] = [];
    for (const m of memories) {
      if (slices.due) await slices.pause();
      subjects.push({ content: m.content, containers: m.containers, statement: statement(m.content) });
    }
    const similarity = (older: number, newer: number) => (vectors ? cosine(vectors[older]!, vectors[newer]!) : 0);
    for (let newer = 1; newer < memories.length; newer++) {
      if (slices.due) await slices.pause();
      for (const { older, similarity: cosineOf, assessment } of assessWithEarlier(subjects, newer, similarity)) {
        const o = memories[older]!;
        const pair = { newer, newerContent: memories[newer]!.content, olderId: o.id, olderContent: o.content, olderContainers: o.containers };
        pairs.push({ ...pair, cosine: cosineOf, ...assessed(assessment) });
      }
    }
    await judge(pairs);
    return {
      contradictions: pairs.flatMap((p) =>
        p.verdict
          ? [
              {
                newer: p.newer,
                olderId: p.olderId,
                olderContent: p.olderContent,
                olderContainers: p.olderContainers,
                score: p.verdict.score,
                reason: p.verdict.reason,
                rule: p.verdict.rule,
              },
            ]
          : [],
      ),
      keptBeside: keptBeside(pairs),
    };
  };
}

/** The near misses of a write: per new memory, the most similar pairs left beside it with a reason. */
function keptBeside(pairs: readonly Pair[]): KeptBeside[] {
  const byMemory = new Map<number, Array<{ pair: Pair; reason: string }>>();
  for (const pair of pairs) {
    const reason = pair.verdict ? null : keptReason(pair);
    if (reason === null) continue;
    const list = byMemory.get(pair.newer) ?? byMemory.set(pair.newer, []).get(pair.newer)!;
    list.push({ pair, reason });
  }
  return [...byMemory.values()].flatMap((list) =>
    list
      .sort((a, b) => b.pair.cosine - a.pair.cosine)
      .slice(0, keptPerMemory)
      .map(({ pair, reason }) => ({ newer: pair.newer, olderId: pair.olderId, olderContent: pair.olderContent, reason })),
  );
}

/** Adds to `into` the `k` pending memories nearest to a new memory's vector among those sharing a container. */
function nearestPending(memory: NewMemory, vector: Float32Array, jobs: readonly PendingMemory[], k: number, into: Map<string, number | null>): void {
  const scored = jobs.flatMap((job) =>
    job.vector && job.id !== memory.id && job.containers.some((c) => memory.containers.includes(c))
      ? [{ id: job.id, similarity: cosine(vector, job.vector) }]
      : [],
  );
  for (const { id, similarity } of scored.sort((a, b) => b.similarity - a.similarity).slice(0, k)) into.set(id, similarity);
}
