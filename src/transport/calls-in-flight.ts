/**
 * The RPCs being handled. Shutdown waits for them before it closes storage: closing the HTTP server waits
 * only for connections, and a call whose client hung up keeps running without one.
 */
export interface CallsInFlight {
  track<T>(call: () => Promise<T>): Promise<T>;
  /** Resolves once no call is in flight (at once if none is). */
  settled(): Promise<void>;
}

export function callsInFlight(): CallsInFlight {
  let count = 0;
  let settle: (() => void) | undefined;
  let settling: Promise<void> | undefined;
  return {
    async track(call) {
      count++;
      try {
        return await call();
      } finally {
        if (--count === 0 && settle) {
          settle();
          settle = settling = undefined;
        }
      }
    },
    settled() {
      if (count === 0) return Promise.resolve();
      return (settling ??= new Promise((resolve) => (settle = resolve)));
    },
  };
}
