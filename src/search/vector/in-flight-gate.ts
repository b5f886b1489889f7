/**
 * Counts operations in flight on a resource, so close() can wait for them before releasing it: a search
 * that began before shutdown finishes on an open table, and one that begins after is refused with a
 * clear error instead of failing inside the native library.
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
    /** Refuses new operations and resolves once those in flight have ended. */
    close(): Promise<void> {
      closed = true;
      return active === 0 ? Promise.resolve() : new Promise((resolve) => (idle = resolve));
    },
  };
}
