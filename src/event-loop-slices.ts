import { setImmediate as nextTurn } from "node:timers/promises";

/** Milliseconds of synchronous work after which a long computation lets the event loop run. */
export const defaultSliceMs = 5;

/**
 * Cuts a long computation on the event loop into slices: its loops check `due` each step and, when due,
 * await `pause()`, so requests that arrive meanwhile (a recall during a bulk write) wait for at most one
 * slice rather than for the whole computation. The check is a clock read; pausing costs one loop turn.
 */
export function eventLoopSlices(sliceMs = defaultSliceMs) {
  let since = performance.now();
  return {
    get due(): boolean {
      return performance.now() - since >= sliceMs;
    },
    async pause(): Promise<void> {
      await nextTurn();
      since = performance.now();
    },
  };
}

export type EventLoopSlices = ReturnType<typeof eventLoopSlices>;
