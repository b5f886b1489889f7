import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { FastifyBaseLogger } from "fastify";
import type { Scope } from "../accounts/container-scope.js";
import type { Database } from "../db/database.js";
import { groupCommit } from "../db/group-commit.js";

/** One recall's audit record as stored; JSON parts are proto3 JSON of the recall messages. */
export interface TraceRecord {
  id: string;
  workspaceId: string;
  keyId: string;
  containers: string[];
  query: string;
  request: JsonObject;
  candidates: JsonValue[];
  returnedIds: string[];
  receipt: JsonObject;
  meta: JsonObject;
  embedMs: number;
  createdAt: Date;
}

interface TraceRow {
  id: string;
  workspace_id: string;
  key_id: string;
  containers: string[];
  query: string;
  request: JsonObject;
  candidates: JsonValue[];
  returned_ids: string[];
  receipt: JsonObject;
  meta: JsonObject;
  embed_ms: number;
  created_at: Date;
}

const recordOf = (r: TraceRow): TraceRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  keyId: r.key_id,
  containers: r.containers,
  query: r.query,
  request: r.request,
  candidates: r.candidates,
  returnedIds: r.returned_ids,
  receipt: r.receipt,
  meta: r.meta,
  embedMs: r.embed_ms,
  createdAt: r.created_at,
});

// A container-scoped key sees only traces of recalls confined to its container. A recall over the whole
// workspace is stored with no containers, and an empty array is contained in every array: hence the
// cardinality check, without which every container's key could read workspace-wide traces.
const visible = `t.workspace_id = $1 and ($2::text is null or (cardinality(t.containers) > 0 and t.containers <@ array[$2::text]))`;

export interface TraceListQuery {
  container: string | null;
  createdAfter: Date | null;
  createdBefore: Date | null;
  /** Exclusive keyset cursor: traces strictly older than this (time, id). */
  before: { createdAt: Date; id: string } | null;
  limit: number;
}

const rowOf = (t: TraceRecord) => ({
  id: t.id,
  workspace_id: t.workspaceId,
  key_id: t.keyId,
  containers: t.containers,
  query: t.query,
  request: t.request,
  candidates: t.candidates,
  returned_ids: t.returnedIds,
  receipt: t.receipt,
  meta: t.meta,
  embed_ms: t.embedMs,
  created_at: t.createdAt.toISOString(),
});

const insertSql = `insert into recall_traces select * from jsonb_populate_recordset(null::recall_traces, $1::jsonb)`;

/** Traces per insert: bounds the statement's size (a trace holds up to 400 candidates). */
const maxBatch = 100;

/**
 * Writes traces by group commit: a recall answers only once its trace is durable, and the traces of
 * recalls that finish while an insert is under way go together in the next one.
 */
export function createTraceStore(db: Database, log: FastifyBaseLogger) {
  const writes = groupCommit<TraceRecord>(async (_, traces) => {
    try {
      await db.query(insertSql, [JSON.stringify(traces.map(rowOf))], { prepare: true });
    } catch (err) {
      if (traces.length === 1) log.error({ err, traceId: traces[0]!.id }, "writing a recall trace failed");
      throw err;
    }
  }, maxBatch);

  return {
    /** Resolves once the trace is stored; rejects when it could not be. */
    record: (trace: TraceRecord): Promise<void> => writes.submit("", trace),

    /** Waits until every recorded trace is written (or has failed). */
    flush: (): Promise<void> => writes.flush(),

    async get(scope: Scope, id: string): Promise<TraceRecord | undefined> {
      const [row] = await db.query<TraceRow>(`select * from recall_traces t where ${visible} and t.id = $3`, [
        scope.workspaceId,
        scope.container,
        id,
      ]);
      return row && recordOf(row);
    },

    async list(scope: Scope, q: TraceListQuery): Promise<TraceRecord[]> {
      const rows = await db.query<TraceRow>(
        `select * from recall_traces t
         where ${visible}
           and ($3::text is null or $3 = any(t.containers))
           and ($4::timestamptz is null or t.created_at >= $4)
           and ($5::timestamptz is null or t.created_at < $5)
           and ($6::timestamptz is null or (t.created_at, t.id) < ($6, $7::text))
         order by t.created_at desc, t.id desc
         limit $8`,
        [scope.workspaceId, scope.container, q.container, q.createdAfter, q.createdBefore, q.before?.createdAt ?? null, q.before?.id ?? null, q.limit],
      );
      return rows.map(recordOf);
    },

    /** Deletes traces older than the retention period; returns how many. */
    async purge(retentionDays: number): Promise<number> {
      const rows = await db.query(
        "delete from recall_traces where created_at < now() - make_interval(secs => $1) returning id",
        [retentionDays * 86_400],
      );
      return rows.length;
    },
  };
}

export type TraceStore = ReturnType<typeof createTraceStore>;
