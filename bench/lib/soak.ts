/** One minute of a soak: the server's RSS and V8's heap (total, committed), MB. */
export interface SoakSample {
  rssMb: number;
  heapTotalMb: number;
}

/** How flat a soak's RSS stayed over its judged window (the target: ±10% over 30 minutes). */
export interface SoakSummary {
  /** The minutes judged, 1-based and inclusive: the last `windowMinutes`, or all of a shorter soak. */
  fromMinute: number;
  toMinute: number;
  minMb: number;
  maxMb: number;
  meanMb: number;
  /** The lowest and highest sample against the mean, in percent (the first negative or zero). */
  belowMeanPct: number;
  aboveMeanPct: number;
  /** The least-squares slope of RSS in MB a minute, and what it adds over the window as a percent of the mean. */
  trendMbPerMin: number;
  trendPct: number;
  /** RSS less V8's heap, which moves with the collector's timing rather than with what the server holds. */
  nonHeapMinMb: number;
  nonHeapMaxMb: number;
}

const round1 = (v: number) => Math.round(v * 10) / 10;

/**
 * Judges the last `windowMinutes` samples, so a long soak's warm-up (the first queries filling caches)
 * does not count as growth; a minute's sample is one reading, so a band is read against the mean, and
 * growth by the trend, not by the first sample.
 */
export function soakSummary(samples: readonly SoakSample[], windowMinutes = 30): SoakSummary | undefined {
  if (samples.length === 0) return undefined;
  const from = Math.max(0, samples.length - windowMinutes);
  const window = samples.slice(from);
  const rss = window.map((s) => s.rssMb);
  const nonHeap = window.map((s) => s.rssMb - s.heapTotalMb);
  const n = window.length;
  const mean = rss.reduce((a, b) => a + b, 0) / n;
  const meanX = (n - 1) / 2;
  let covariance = 0;
  let variance = 0;
  for (let i = 0; i < n; i++) {
    covariance += (i - meanX) * (rss[i]! - mean);
    variance += (i - meanX) ** 2;
  }
  const slope = variance === 0 ? 0 : covariance / variance;
  const minMb = Math.min(...rss);
  const maxMb = Math.max(...rss);
  return {
    fromMinute: from + 1,
    toMinute: samples.length,
    minMb,
    maxMb,
    meanMb: round1(mean),
    belowMeanPct: round1((minMb / mean - 1) * 100),
    aboveMeanPct: round1((maxMb / mean - 1) * 100),
    trendMbPerMin: Math.round(slope * 100) / 100,
    trendPct: round1(((slope * (n - 1)) / mean) * 100),
    nonHeapMinMb: Math.min(...nonHeap),
    nonHeapMaxMb: Math.max(...nonHeap),
  };
}

/** One line for a soak's summary. */
export const soakLine = (s: SoakSummary) =>
  `Soak, minutes ${s.fromMinute}-${s.toMinute}: RSS ${s.minMb}-${s.maxMb} MB, mean ${s.meanMb} (${s.belowMeanPct}% / +${s.aboveMeanPct}%), ` +
  `trend ${s.trendMbPerMin} MB a minute (${s.trendPct}% over the window); RSS less V8's heap ${s.nonHeapMinMb}-${s.nonHeapMaxMb} MB`;
