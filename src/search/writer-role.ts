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
