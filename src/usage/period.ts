/** The monthly usage period holding `now`: from the first day of its month to the next, 00:00 UTC. */
export function usagePeriod(now: Date): { start: Date; resetsAt: Date } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start, resetsAt };
}

/** Whole seconds from `now` to the period's reset, at least 1: the Retry-After of an exhausted quota. */
export const secondsToReset = (now: Date): number =>
  Math.max(1, Math.ceil((usagePeriod(now).resetsAt.getTime() - now.getTime()) / 1000));

/** The period's key in storage: its first day, YYYY-MM-DD. */
export const periodKey = (now: Date): string => usagePeriod(now).start.toISOString().slice(0, 10);

/** The UTC day holding `now`, YYYY-MM-DD: the key of its daily counters. */
export const dayKey = (now: Date): string => now.toISOString().slice(0, 10);

/** Every day of the period holding `now`, from its first day to `now`'s, as YYYY-MM-DD: at most 31. */
export function periodDaysSoFar(now: Date): string[] {
  const days: string[] = [];
  const first = usagePeriod(now).start;
  for (let d = first.getUTCDate(); d <= now.getUTCDate(); d++) {
    days.push(dayKey(new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), d))));
  }
  return days;
}
