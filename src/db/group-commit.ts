interface Waiting<T> {
  item: T;
  done: (err?: unknown) => void;
}

/**
 * Group commit: items submitted under one key while that key's write is under way go together in its
 * next write, so under load an item costs a share of one round trip; items submitted in the same turn of
 * the event loop share the first write too. When a write of several items fails, each is written alone,
 * so one item that cannot be written fails only its own caller.
 */
export function groupCommit<T>(write: (key: string, items: T[]) => Promise<void>, maxBatch: number) {
  // A key is present while its queue is drained; items pushed meanwhile are taken by the same drain.
  const queues = new Map<string, Waiting<T>[]>();
  const drains = new Set<Promise<void>>();

  async function settle(key: string, batch: Waiting<T>[]): Promise<void> {
    try {
      await write(key, batch.map((w) => w.item));
      for (const w of batch) w.done();
      return;
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.done(err);
        return;
      }
    }
    for (const w of batch) await settle(key, [w]);
  }

  /** Never rejects: settle settles every item it is given. */
  async function drain(key: string, queue: Waiting<T>[]): Promise<void> {
    await new Promise((turn) => setImmediate(turn));
    while (queue.length > 0) await settle(key, queue.splice(0, maxBatch));
    queues.delete(key);
  }

  return {
    /** Resolves once the item is written; rejects with the error of its own write when it could not be. */
    submit(key: string, item: T): Promise<void> {
      return new Promise((resolve, reject) => {
        const waiting = { item, done: (err?: unknown) => (err === undefined ? resolve() : reject(err)) };
        const queue = queues.get(key);
        if (queue) {
          queue.push(waiting);
          return;
        }
        const fresh = [waiting];
        queues.set(key, fresh);
        const drained = drain(key, fresh).finally(() => drains.delete(drained));
        drains.add(drained);
      });
    },

    /** Waits until every submitted item is written (or has failed). */
    async flush(): Promise<void> {
      while (drains.size > 0) await Promise.all(drains);
    },
  };
}
