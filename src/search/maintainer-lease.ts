import type { FastifyBaseLogger } from "fastify";
import type { Database } from "../db/database.js";

// Exactly one node creates and optimises the search indexes: two nodes compacting or building indexes
// on one LanceDB table at once undo each other's commits. The node holding an unexpired lease row is
// the maintainer; it renews the lease at a third of its length, and another node takes it over once it
// has expired (a crashed holder) or been released (a clean shutdown). Expiry is judged on the database
// clock, so nodes' clocks need not agree.

export interface MaintainerLease {
  /** This node's id in the lease row. */
  readonly nodeId: string;
  /** Whether this node held the lease at its last attempt and it has not yet expired by this node's clock. */
  holds(): boolean;
  /** Takes or renews the lease if it is free, expired or already ours; returns whether this node holds it. */
  tryAcquire(): Promise<boolean>;
  /** Tries at once and then every ttl/3 until stop(). */
  start(): void;
  /** Stops renewing and gives the lease up, so another node can take it at its next attempt. */
  stop(): Promise<void>;
}

export function createMaintainerLease(db: Database, nodeId: string, ttlMs: number, log: FastifyBaseLogger): MaintainerLease {
  // Our own view of the expiry, measured from before the statement was sent: never later than the database's.
  let heldUntil = 0;
  let timer: NodeJS.Timeout | undefined;
  let attempt: Promise<boolean> | undefined;
  let stopped = false;

  async function acquire(): Promise<boolean> {
    const sent = performance.now();
    const rows = await db.query<{ holder: string }>(
      `insert into index_maintainer (id, holder, expires_at) values (1, $1, now() + $2::double precision * interval '1 millisecond')
       on conflict (id) do update set holder = excluded.holder, expires_at = excluded.expires_at
       where index_maintainer.expires_at < now() or index_maintainer.holder = $1
       returning holder`,
      [nodeId, ttlMs],
    );
    const held = rows.length === 1 && !stopped;
    const was = heldUntil > performance.now();
    heldUntil = held ? sent + ttlMs : 0;
    if (held !== was) log.info({ nodeId, held }, held ? "this node now maintains the search indexes" : "this node no longer maintains the search indexes");
    return held;
  }

  function tryAcquire(): Promise<boolean> {
    // One attempt at a time: a slow database must not stack renewals.
    attempt ??= acquire().finally(() => {
      attempt = undefined;
    });
    return attempt;
  }

  return {
    nodeId,
    holds: () => heldUntil > performance.now(),
    tryAcquire,
    start() {
      const tick = () => {
        tryAcquire().catch((err: unknown) => log.warn({ err }, "index maintainer lease: renewal failed"));
      };
      timer = setInterval(tick, Math.max(1, Math.floor(ttlMs / 3)));
      timer.unref();
      tick();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await attempt?.catch(() => undefined);
      heldUntil = 0;
      await db.query("delete from index_maintainer where holder = $1", [nodeId]);
    },
  };
}
