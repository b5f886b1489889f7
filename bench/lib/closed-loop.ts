import { setImmediate as nextTurn } from "node:timers/promises";
import type { Recorder } from "./stats.js";

/** A failed call, with the kind it is counted under (an HTTP status or a gRPC code). */
export class CallFailure extends Error {
  constructor(readonly kind: string) {
    super(kind);
  }
}

export interface LoopLimits {
  concurrency: number;
  /** Stop issuing calls after this long... */
  durationS?: number;
  /** ...or after this many calls, whichever comes first. */
  calls?: number;
}

/**
 * Closed-loop load: `concurrency` workers each issue the next call as soon as their previous one
 * returns, so the offered load adapts to the server and the latencies are those seen under it.
 * Each call gets a distinct index. Returns the elapsed seconds.
 */
export async function closedLoop(limits: LoopLimits, rec: Recorder, call: (i: number) => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  const deadline = limits.durationS === undefined ? undefined : start + BigInt(Math.round(limits.durationS * 1e9));
  const calls = limits.calls ?? Number.POSITIVE_INFINITY;
  let next = 0;
  const worker = async () => {
    while (next < calls && (deadline === undefined || process.hrtime.bigint() < deadline)) {
      const i = next++;
      const t0 = process.hrtime.bigint();
      try {
        await call(i);
        rec.success(Number(process.hrtime.bigint() - t0) / 1e6);
      } catch (err) {
        rec.failure(err instanceof CallFailure ? err.kind : String(err));
        // Calls to a dead server or a closed client fail without I/O; yield so that such a spin
        // cannot starve timers and signal handlers (the deadline, SIGINT cleanup).
        await nextTurn();
      }
    }
  };
  await Promise.all(Array.from({ length: limits.concurrency }, worker));
  return Number(process.hrtime.bigint() - start) / 1e9;
}
