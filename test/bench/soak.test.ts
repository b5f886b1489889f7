import { expect, it } from "vitest";
import { soakLine, soakSummary } from "../../bench/lib/soak.js";

const flat = (rss: number[], heapTotal = 100) => rss.map((rssMb) => ({ rssMb, heapTotalMb: heapTotal }));

it("judges the last window's minutes against their mean, leaving a long soak's warm-up out", () => {
  // Five warm-up minutes climbing to 600, then 30 minutes between 590 and 610 with one collector's peak.
  const samples = flat([500, 520, 540, 560, 580, ...Array.from({ length: 30 }, (_, i) => (i === 12 ? 660 : i % 2 === 0 ? 590 : 610))]);
  const s = soakSummary(samples)!;
  expect([s.fromMinute, s.toMinute, s.minMb, s.maxMb]).toEqual([6, 35, 590, 660]);
  expect(s.meanMb).toBe(602.3);
  expect(s.belowMeanPct).toBe(-2);
  expect(s.aboveMeanPct).toBe(9.6);
  expect(Math.abs(s.trendPct)).toBeLessThan(2);
  expect(soakLine(s)).toBe(
    `Soak, minutes 6-35: RSS 590-660 MB, mean 602.3 (-2% / +9.6%), trend ${s.trendMbPerMin} MB a minute (${s.trendPct}% over the window); RSS less V8's heap 490-560 MB`,
  );
});

it("reads growth from the trend: a steady climb of 2 MB a minute is about 10% over 30 minutes", () => {
  const s = soakSummary(flat(Array.from({ length: 30 }, (_, i) => 580 + 2 * i)))!;
  expect(s.trendMbPerMin).toBe(2);
  expect(s.trendPct).toBe(9.5); // 58 MB over a mean of 609
  expect([s.fromMinute, s.toMinute]).toEqual([1, 30]);
});

it("keeps RSS less V8's heap apart, so the collector's swings do not hide native growth", () => {
  const s = soakSummary([
    { rssMb: 700, heapTotalMb: 200 },
    { rssMb: 600, heapTotalMb: 100 },
    { rssMb: 650, heapTotalMb: 140 },
  ])!;
  expect([s.nonHeapMinMb, s.nonHeapMaxMb]).toEqual([500, 510]);
  expect(soakSummary([])).toBeUndefined();
});
