import { num } from "../format.js";

// One metered quantity over the days of a usage period, in plain SVG: daily bars, or the running total
// against the plan's limit.

const width = 600;
const height = 180;
const left = 52;
const bottom = 22;
const top = 12;

export function DayChart(p: {
  label: string;
  /** YYYY-MM-DD of every day so far. */
  dates: string[];
  /** Days in the whole period (the x axis). */
  periodDays: number;
  values: number[];
  cumulative?: boolean;
  /** The plan's cap for the period, when there is one. */
  limit?: number;
}) {
  const points = p.cumulative ? p.values.map((_, i) => p.values.slice(0, i + 1).reduce((a, b) => a + b, 0)) : p.values;
  const peak = Math.max(1, ...points);
  // A limit far above the usage would flatten it: drawn only when it is within reach.
  const showLimit = p.cumulative === true && p.limit !== undefined && p.limit <= peak * 4;
  const yMax = showLimit ? Math.max(peak, p.limit!) : peak;
  const plotW = width - left - 8;
  const plotH = height - top - bottom;
  const slot = plotW / p.periodDays;
  const x = (i: number) => left + i * slot;
  const y = (v: number) => top + plotH - (v / yMax) * plotH;
  const total = points.at(-1) ?? 0;
  return (
    <figure class="chart">
      <figcaption>
        {p.label}: {p.cumulative ? `${num(total)} so far` : `${num(p.values.reduce((a, b) => a + b, 0))} this period`}
        {p.limit !== undefined ? ` of ${num(p.limit)}` : " (no limit)"}
        {p.cumulative && p.limit !== undefined && !showLimit && " (the limit is off the chart)"}
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${p.label} per day of the period`} class="day-chart">
        <line x1={left} x2={width - 8} y1={top + plotH} y2={top + plotH} class="axis" />
        <line x1={left} x2={left} y1={top} y2={top + plotH} class="axis" />
        <text x={left - 4} y={top + 8} class="axis-label" text-anchor="end">
          {num(yMax)}
        </text>
        <text x={left - 4} y={top + plotH} class="axis-label" text-anchor="end">
          0
        </text>
        {Array.from({ length: p.periodDays }, (_, i) => i).filter((i) => i === 0 || (i + 1) % 5 === 0).map((i) => (
          <text key={i} x={x(i) + slot / 2} y={height - 6} class="axis-label" text-anchor="middle">
            {i + 1}
          </text>
        ))}
        {p.cumulative ? (
          <polyline class="series-line" points={points.map((v, i) => `${x(i) + slot / 2},${y(v)}`).join(" ")} />
        ) : (
          points.map((v, i) => (
            <rect key={p.dates[i]} class="series-bar" x={x(i) + 1} y={y(v)} width={Math.max(1, slot - 2)} height={top + plotH - y(v)}>
              <title>{`${p.dates[i]}: ${num(v)}`}</title>
            </rect>
          ))
        )}
        {showLimit && <line class="limit" x1={left} x2={width - 8} y1={y(p.limit!)} y2={y(p.limit!)} />}
      </svg>
    </figure>
  );
}
