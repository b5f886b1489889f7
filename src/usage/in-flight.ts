/** Requests in flight per caller on this node, for the concurrency limit. */
export class InFlight {
  private readonly counts = new Map<string, number>();

  /** Counts a request in if the caller has fewer than `limit` in flight; returns its release, or null. */
  acquire(caller: string, limit: number): (() => void) | null {
    const n = this.counts.get(caller) ?? 0;
    if (n >= limit) return null;
    this.counts.set(caller, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.counts.get(caller) ?? 1) - 1;
      if (left === 0) this.counts.delete(caller);
      else this.counts.set(caller, left);
    };
  }
}
