/**
 * Counts operations in flight on a resource, so close() can wait for them before releasing it: a search
 * that began before shutdown finishes on an open table, a call whose client hung up finishes before the
 * server closes storage, and an operation that begins after is refused with a clear error instead of
 * failing inside what was released.
 */
export function inFlightGate(name: string) {
  let active = 0;
  let closed = false;
  let idle: (() => void) | undefined;

  return {
    async run<T>(operation: () => Promise<T>): Promise<T> {
      if (closed) throw new Error(`${name} is closed`);
      active++;
      try {
        return await operation();
      } finally {
        if (--active === 0) idle?.();
      }
    },
    /** Refuses new operations and resolves once those in flight have ended, or after `withinMs` if given. */
    async close(withinMs?: number): Promise<void> {
      closed = true;
      if (active === 0) return;
      const ended = new Promise<void>((resolve) => (idle = resolve));
      if (withinMs === undefined) return ended;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs)));
      await Promise.race([ended, late]).finally(() => clearTimeout(timer));
    },
  };
}

export type InFlightGate = ReturnType<typeof inFlightGate>;
