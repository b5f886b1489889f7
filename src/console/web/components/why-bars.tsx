import type { RecallWhy } from "../../../../gen/agent/v1/recall_pb.js";

// A recall item's `why`, one bar per factor of its score: the evidence (cosine, keyword, their relevance),
// the multipliers (recency, severity, confidence), and the final score they make.

// Every factor with three decimals, so the bars' numbers line up.
const score = (n: number) => n.toFixed(3);

interface Factor {
  key: string;
  label: string;
  value: number;
  /** The bar's full width stands for this value. */
  scale: number;
  /** Multipliers are drawn against a mark at 1 (no effect). */
  multiplier?: boolean;
  detail?: string;
}

/** The keyword evidence on the same 0-1 scale recall's relevance uses: bm25 / (bm25 + 12). */
const keywordScore = (bm25: number): number => bm25 / (bm25 + 12);

function factorsOf(why: RecallWhy): Factor[] {
  return [
    { key: "cosine", label: "cosine", value: Math.max(0, why.cosine), scale: 1 },
    { key: "keyword", label: "keyword", value: keywordScore(why.bm25), scale: 1, detail: `bm25 ${score(why.bm25)}, query coverage ${score(why.queryCoverage)}` },
    { key: "relevance", label: "relevance", value: why.relevance, scale: 1, detail: `informativeness ${score(why.informativeness)}` },
    { key: "recency", label: "× recency", value: why.recencyBoost, scale: 1.25, multiplier: true },
    { key: "severity", label: "× severity", value: why.severityMultiplier, scale: 1.25, multiplier: true },
    { key: "confidence", label: "× confidence", value: why.confidenceMultiplier, scale: 1.25, multiplier: true },
    { key: "final", label: "= final score", value: why.finalScore, scale: Math.max(1.25, why.finalScore) },
  ];
}

const rowHeight = 22;
const labelWidth = 104;
const barWidth = 150;

export function WhyBars({ why, label }: { why: RecallWhy; label: string }) {
  const factors = factorsOf(why);
  const height = factors.length * rowHeight;
  return (
    <figure class="why">
      <svg
        class="why-bars"
        viewBox={`0 0 ${labelWidth + barWidth + 70} ${height}`}
        role="img"
        aria-label={`Why ${label} scored ${score(why.finalScore)}: ${factors.map((f) => `${f.label} ${score(f.value)}`).join(", ")}`}
      >
        {factors.map((f, i) => {
          const y = i * rowHeight;
          const w = Math.max(0, Math.min(1, f.value / f.scale)) * barWidth;
          return (
            <g key={f.key} class={`bar bar-${f.key}`} data-factor={f.key} data-value={f.value}>
              <title>{`${f.label}: ${score(f.value)}${f.detail ? ` (${f.detail})` : ""}`}</title>
              <text x={0} y={y + 15} class="bar-label">
                {f.label}
              </text>
              <rect x={labelWidth} y={y + 4} width={barWidth} height={14} class="bar-track" />
              <rect x={labelWidth} y={y + 4} width={w} height={14} class="bar-value" />
              {f.multiplier && <line x1={labelWidth + barWidth / f.scale} x2={labelWidth + barWidth / f.scale} y1={y + 1} y2={y + 21} class="bar-one" />}
              <text x={labelWidth + barWidth + 6} y={y + 15} class="bar-number">
                {score(f.value)}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption class="muted">
        via {why.matchedVia || "—"}
        {why.keywordMatches.length > 0 && <> · matched {why.keywordMatches.join(", ")}</>}
        {why.rerankApplied && <> · reranked {why.rerankScore !== undefined && score(why.rerankScore)}</>}
        {why.validityState && <> · {why.validityState}</>}
        {why.inheritedFrom && <> · answers for {why.inheritedFrom}</>}
      </figcaption>
    </figure>
  );
}
