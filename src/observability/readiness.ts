/** Whether this node can serve requests, for GET /readyz and gRPC health checking. */
export interface Readiness {
  /** Ready: the node is not shutting down and its database answers. */
  check(): Promise<boolean>;
  /** The readiness now, then every change, until the signal aborts or the node shuts down. */
  watch(signal: AbortSignal): AsyncIterable<boolean>;
  /** The node is shutting down: not ready from now on; every watch reports it and ends. */
  shutdown(): void;
}

interface Watcher {
  /** The newest readiness not yet taken by the watch. */
  latest: boolean | undefined;
  ended: boolean;
  wake: (() => void) | undefined;
}

/**
 * Readiness from a database ping. Watches share one poll every `pollMs` while any are open, so
 * many watching clients cost one ping per interval.
 */
export function createReadiness(ping: () => Promise<unknown>, pollMs: number): Readiness {
  let stopping = false;
  const watchers = new Set<Watcher>();
  let poll: NodeJS.Timeout | undefined;

  async function check(): Promise<boolean> {
    if (stopping) return false;
    try {
      await ping();
      return !stopping;
    } catch {
      return false;
    }
  }

  const deliver = (watcher: Watcher, update: Partial<Watcher>) => {
    Object.assign(watcher, update);
    watcher.wake?.();
  };

  // The next ping starts after the previous one answered, so a slow database never stacks them up.
  function schedulePoll(): void {
    if (poll !== undefined || stopping || watchers.size === 0) return;
    poll = setTimeout(() => {
      void check().then((ready) => {
        poll = undefined;
        for (const watcher of watchers) deliver(watcher, { latest: ready });
        schedulePoll();
      });
    }, pollMs);
    poll.unref();
  }

  async function* watch(signal: AbortSignal): AsyncGenerator<boolean> {
    // A watch opened during shutdown reports not ready and ends.
    const watcher: Watcher = { latest: undefined, ended: stopping, wake: undefined };
    const end = () => deliver(watcher, { ended: true });
    signal.addEventListener("abort", end, { once: true });
    watchers.add(watcher);
    schedulePoll();
    try {
      let current = await check();
      yield current;
      while (!signal.aborted) {
        if (watcher.latest === undefined && !watcher.ended) await new Promise<void>((resolve) => (watcher.wake = resolve));
        watcher.wake = undefined;
        const next = watcher.latest;
        watcher.latest = undefined;
        if (next !== undefined && next !== current) {
          current = next;
          yield current;
        }
        if (watcher.ended) return;
      }
    } finally {
      watchers.delete(watcher);
      signal.removeEventListener("abort", end);
    }
  }

  return {
    check,
    watch,
    shutdown() {
      stopping = true;
      clearTimeout(poll);
      for (const watcher of watchers) deliver(watcher, { latest: false, ended: true });
    },
  };
}
