import { describe, expect, it } from "vitest";
import { selectiveFilters } from "../../src/search/vector/selective-filters.js";

describe("selectiveFilters", () => {
  it("answers a remembered filter for its searches, then forgets it", () => {
    const filters = selectiveFilters({ searches: 2, ttlMs: 1_000 });
    expect(filters.take("a", 0)).toBe(false);
    filters.remember("a", 0);
    expect([filters.take("a", 1), filters.take("a", 2), filters.take("a", 3)]).toEqual([true, true, false]);
    expect(filters.take("a", 4)).toBe(false);
  });

  it("forgets a filter after ttlMs, and remembering it again starts over", () => {
    const filters = selectiveFilters({ searches: 10, ttlMs: 1_000 });
    filters.remember("a", 0);
    expect(filters.take("a", 999)).toBe(true);
    expect(filters.take("a", 1_000)).toBe(false);
    filters.remember("a", 2_000);
    expect(filters.take("a", 2_500)).toBe(true);
  });

  it("keeps its entries within maxBytes, dropping the oldest, and never holds a key larger than that", () => {
    // An entry of a 10-character key is 276 bytes (20 of key, 256 of overhead): three fit in 850.
    const filters = selectiveFilters({ maxBytes: 850 });
    for (const key of ["k000000001", "k000000002", "k000000003", "k000000004"]) filters.remember(key, 0);
    expect(["k000000001", "k000000002", "k000000003", "k000000004"].map((key) => filters.take(key, 1))).toEqual([false, true, true, true]);
    filters.remember("x".repeat(300), 2);
    expect(filters.take("x".repeat(300), 3)).toBe(false);
    expect(filters.take("k000000004", 3)).toBe(true);
  });
});
