import type { FastifyBaseLogger } from "fastify";

/**
 * Where only the index maintainer writes the index (LANCEDB_WRITERS=maintainer), a node that takes the
 * role first reconciles the index with Postgres, as every writer does at its start: a commit lost to a
 * writer that overlapped the last one is queued again. Returns a check to run at start and at each poll;
 * it calls `catchUp` once each time `writes()` turns true.
 */
export function onWriterRole(writes: () => boolean, catchUp: () => void): () => void {
  let caughtUp = false;
  return () => {
    if (!writes()) caughtUp = false;
    else if (!caughtUp) {
      caughtUp = true;
      catchUp();
    }
  };
}

/** Every node writes: a directory or pgvector, where concurrent commits are safe. */
export const everyNodeWrites = () => true;

/**
 * What a node does on taking the writer role: writes what is queued, reconciles the index with storage
 * (see reconcileInPages), then writes what that queued. Resolves once reconciliation has ended; never rejects.
 */
export function reconcileAndDrain(
  reconcile: () => Promise<{ queued: number; removed: number }>,
  drain: () => void,
  log: FastifyBaseLogger,
  index: "vector index" | "skill index",
): Promise<void> {
  drain();
  return reconcile()
    .then(({ queued, removed }) => {
      if (queued + removed > 0) log.info({ queued, removed }, `${index} reconciled with storage`);
      drain();
    })
    .catch((err: unknown) => log.error({ err }, `${index} reconciliation failed`));
}
