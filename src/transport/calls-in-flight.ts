/**
 * The RPCs being handled. Shutdown waits for them before it closes storage: closing the HTTP server waits
 * only for connections, and a call whose client hung up keeps running without one.
 */
export interface CallsInFlight {
  track<T>(call: () => Promise<T>): Promise<T>;
  /** Resolves once no call is in flight (at once if none is), or after `withinMs` at the latest. */
  settled(withinMs: number): Promise<void>;
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
    async settled(withinMs) {
      if (count === 0) return;
      settling ??= new Promise((resolve) => (settle = resolve));
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs)));
      await Promise.race([settling, late]).finally(() => clearTimeout(timer));
    },
  };
}
