import { describe, expect, it } from "vitest";
import { defaultOverfetch, firstSearchSize, nextSearchSize, type OverfetchLimits } from "../../src/recall/overfetch.js";

const limits: OverfetchLimits = { firstFactor: 4, margin: 1.5, maxK: 5000 };

describe("over-fetch policy", () => {
  it("starts at pool * firstFactor, within maxK", () => {
    expect(firstSearchSize(40, limits)).toBe(160);
    expect(firstSearchSize(400, { ...limits, maxK: 1000 })).toBe(1000);
    expect(firstSearchSize(40, defaultOverfetch)).toBeLessThanOrEqual(defaultOverfetch.maxK);
  });

  it("stops when the pool is full, the search ran out of records, or k reached maxK", () => {
    expect(nextSearchSize(40, { k: 160, returned: 160, kept: 40 }, limits)).toBeNull();
    expect(nextSearchSize(40, { k: 160, returned: 120, kept: 3 }, limits)).toBeNull();
    expect(nextSearchSize(40, { k: 5000, returned: 5000, kept: 3 }, limits)).toBeNull();
  });

  it("asks for enough hits that the observed share of matches covers the pool with the margin", () => {
    // 4 of 160 kept: about 2.5% match, so 40 * 1.5 / 0.025 = 2,400.
    expect(nextSearchSize(40, { k: 160, returned: 160, kept: 4 }, limits)).toBe(2400);
  });

  it("at least doubles k, and never passes maxK", () => {
    expect(nextSearchSize(40, { k: 160, returned: 160, kept: 39 }, limits)).toBe(320);
    expect(nextSearchSize(40, { k: 160, returned: 160, kept: 0 }, limits)).toBe(5000);
    expect(nextSearchSize(40, { k: 3000, returned: 3000, kept: 30 }, limits)).toBe(5000);
  });

  it("ends within a bounded number of rounds whatever the searches return", () => {
    for (const kept of [0, 1, 5, 39]) {
      let k: number | null = firstSearchSize(40, limits);
      let rounds = 0;
      while (k !== null) {
        rounds++;
        k = nextSearchSize(40, { k, returned: k, kept }, limits);
      }
      expect(rounds).toBeLessThanOrEqual(Math.ceil(Math.log2(limits.maxK / firstSearchSize(40, limits))) + 1);
    }
  });
});
