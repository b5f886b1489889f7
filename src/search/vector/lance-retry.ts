// LanceDB commits optimistically: a write, compaction or index build that loses the race with another
// writer on the same table (this process or another node) fails, and running the whole operation again
// on the latest version succeeds. The messages come from Lance's Rust core: "Retryable commit conflict
// for version N: … transaction was preempted by concurrent transaction …"; "Commit conflict for version
// N: Failed to commit the transaction after K retries" once its own inner retries are spent; and
// "Incompatible transaction: This CreateIndex transaction is incompatible with concurrent transaction
// Overwrite", seen when two nodes create a new table at the same moment (the second create commits an
// Overwrite of the still empty table). Lance cannot rebase the last one itself, but our operations
// decide everything afresh on each run (which rows, which indexes), so they may.

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Delay before the first retry; it doubles after each one, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { attempts: 8, baseDelayMs: 20, maxDelayMs: 2000 };

const retryable = /commit conflict|transaction was preempted|incompatible transaction/i;

/** Whether an error from LanceDB is a lost commit race that the same operation may simply run again. */
export const isRetryableConflict = (err: unknown): boolean => err instanceof Error && retryable.test(err.message);

/** Delay before retry number `retry` (1-based): exponential, capped, with full jitter from `random` in [0, 1). */
export const backoffMs = (policy: RetryPolicy, retry: number, random: number): number =>
  Math.floor(random * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1)));

/**
 * Runs `operation`, running it again after a jittered, growing pause while it fails with a retryable
 * commit conflict, at most policy.attempts times; any other error, or the last conflict, is thrown.
 * The operation must be safe to repeat (it re-reads whatever it decided on).
 */
export async function retryConflicts<T>(
  operation: () => Promise<T>,
  policy: RetryPolicy = defaultRetryPolicy,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: () => number = Math.random,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (err) {
      if (attempt >= policy.attempts || !isRetryableConflict(err)) throw err;
      await sleep(backoffMs(policy, attempt, random()));
    }
  }
}
