import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { detectContradiction } from "../../src/memories/contradictions/rules.js";

// The offline rules against the labelled pairs of bench/data/contradictions.jsonl (bench/contradictions.ts
// reports the details): a guard that changes to the rules keep the documented targets.
const pairs = readFileSync(new URL("../../bench/data/contradictions.jsonl", import.meta.url), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as { older: string; newer: string; contradiction: boolean; split: string });

describe("offline contradiction rules", () => {
  it.each(["dev", "heldout"])("meet precision >= 0.9 and recall >= 0.8 on the %s pairs", (split) => {
    const rows = pairs.filter((p) => p.split === split).map((p) => ({ ...p, flagged: detectContradiction(p.older, p.newer) !== null }));
    const tp = rows.filter((r) => r.flagged && r.contradiction).length;
    const flagged = rows.filter((r) => r.flagged).length;
    const positives = rows.filter((r) => r.contradiction).length;
    expect(tp / flagged).toBeGreaterThanOrEqual(0.9);
    expect(tp / positives).toBeGreaterThanOrEqual(0.8);
  });

  it("explains what changed, and ignores the same value written differently", () => {
    expect(detectContradiction("The user lives in Berlin", "The user lives in Munich")).toEqual({
      rule: "value",
      score: 0.72,
      reason: "different value: Berlin → Munich",
    });
    expect(detectContradiction("The user loves Chinese food", "The user hates Chinese food")?.rule).toBe("opposite");
    expect(detectContradiction("Carol's pager is 555-0101", "carols pager is 555 0101")).toBeNull();
    expect(detectContradiction("m1", "m2")).toBeNull();
  });
});
