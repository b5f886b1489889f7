import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { CreateMemoriesRequestSchema, CreateOutcome, MemoryInputSchema, type CreateMemoriesRequest } from "../../gen/agent/v1/memory_pb.js";
import { agentPrincipal } from "../accounts/principal.js";
import type { CreateResponse } from "./create-receipt.js";
import { idempotencyHeader } from "./idempotency.js";
import { memoryLimits, setFields } from "./memory-rules.js";

// Agents mostly write one memory a request. Each create pays fixed costs that do not grow with its
// memories: Postgres statements (on PGlite they run on the event loop), a model call, a vector search for
// contradiction candidates. Single creates of one key that arrive while earlier ones of that key are
// being written are therefore written together, as one batch: one transaction, one index job batch,
// one search. Each request still gets its own response, is acknowledged only once its group has
// committed (read-your-writes), and fails only itself: when a group cannot be written, each of its
// requests is written alone. A request with an Idempotency-Key, a dry run and a batch always run alone.

export type CreateMemoriesFn = (req: CreateMemoriesRequest, ctx: HandlerContext) => Promise<CreateResponse>;

interface Waiting {
  req: CreateMemoriesRequest;
  ctx: HandlerContext;
  resolve: (res: CreateResponse) => void;
  reject: (err: unknown) => void;
}

interface KeyQueue {
  waiting: Waiting[];
  running: number;
  /** A start is scheduled for the next turn of the event loop. */
  scheduled: boolean;
}

export interface CreateGroupOptions {
  /** Requests one group takes at most (a batch's limit). */
  maxGroup: number;
  /**
   * Groups of one key written at the same time: while one waits for the model, the next one's statements
   * run, so neither the model process nor the event loop idles.
   */
  maxRunning: number;
  /**
   * Requests that must be waiting before a group starts beside one already running; fewer wait for it to
   * end. A group's cost is mostly fixed, so groups of one or two beside another cost nearly as much as
   * the requests written one by one. At 8 in flight, four took main-thread CPU per create from 10.2 to
   * 7.0 ms and p95 from 649 to 516 ms against starting at once (2026-11, 2-core AMD EPYC, Node 20,
   * bench/create-ab.ts; docs/benchmarks/writes-and-peers.md).
   */
  besideAfter: number;
}

export const defaultCreateGroupOptions: CreateGroupOptions = { maxGroup: memoryLimits.batchSize, maxRunning: 2, besideAfter: 4 };

/** A key's groups are formed from requests of one principal: one workspace, one key, one scope. */
function groupKey(req: CreateMemoriesRequest, ctx: HandlerContext): string | null {
  if (req.memories.length > 0 || req.dryRun === true || setFields(req).length === 0) return null;
  if (ctx.requestHeader.has(idempotencyHeader)) return null;
  try {
    const p = agentPrincipal(ctx);
    return `${p.workspaceId}\u0000${p.keyId}`;
  } catch {
    return null;
  }
}

/** The single request's memory as an item of a batch. */
function batchItem(req: CreateMemoriesRequest) {
  const { content, type, containers, tags, source, validFrom, validUntil, metadata, confidence, severity, supersedes } = req;
  return create(MemoryInputSchema, { content, type, containers, tags, source, validFrom, validUntil, metadata, confidence, severity, supersedes });
}

/** The part of a group's response that answers its `i`th request. */
function responseAt(res: CreateResponse, i: number): CreateResponse {
  const result = res.results![i]!;
  const stored = result.outcome === CreateOutcome.STORED;
  return {
    ids: [res.ids![i]!],
    memories: [res.memories![i]!],
    results: [result],
    contradictions: stored ? (res.contradictions ?? []).filter((c) => c.memoryId === result.id) : [],
  };
}

export function groupedCreates(createMemories: CreateMemoriesFn, opts: CreateGroupOptions = defaultCreateGroupOptions): CreateMemoriesFn {
  const queues = new Map<string, KeyQueue>();

  const alone = (w: Waiting) => createMemories(w.req, w.ctx).then(w.resolve, w.reject);

  async function write(group: Waiting[]): Promise<void> {
    if (group.length === 1) return alone(group[0]!);
    let res: CreateResponse;
    try {
      res = await createMemories(create(CreateMemoriesRequestSchema, { memories: group.map((w) => batchItem(w.req)) }), group[0]!.ctx);
    } catch {
      // Nothing of the group was written: each request alone gets its own outcome (or its own error).
      await Promise.all(group.map(alone));
      return;
    }
    group.forEach((w, i) => w.resolve(responseAt(res, i)));
  }

  const startable = (queue: KeyQueue) =>
    queue.running < opts.maxRunning && queue.waiting.length >= (queue.running === 0 ? 1 : opts.besideAfter);

  function startGroups(key: string, queue: KeyQueue): void {
    while (startable(queue)) {
      const group = queue.waiting.splice(0, opts.maxGroup);
      queue.running++;
      void write(group).finally(() => {
        queue.running--;
        startGroups(key, queue);
        if (queue.running === 0 && queue.waiting.length === 0 && !queue.scheduled) queues.delete(key);
      });
    }
  }

  return (req, ctx) => {
    const key = groupKey(req, ctx);
    if (key === null) return createMemories(req, ctx);
    return new Promise<CreateResponse>((resolve, reject) => {
      let queue = queues.get(key);
      if (!queue) queues.set(key, (queue = { waiting: [], running: 0, scheduled: false }));
      queue.waiting.push({ req, ctx, resolve, reject });
      if (queue.scheduled || !startable(queue)) return;
      // Requests of the same turn of the event loop (one client's pipelined calls) start together.
      queue.scheduled = true;
      const scheduled = queue;
      setImmediate(() => {
        scheduled.scheduled = false;
        startGroups(key, scheduled);
      });
    });
  };
}
