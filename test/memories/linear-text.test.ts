import { describe, expect, it } from "vitest";
import { diffHunks } from "../../src/memories/contradictions/diff.js";
import { detectContradiction } from "../../src/memories/contradictions/rules.js";
import { statementOf } from "../../src/memories/contradictions/statement.js";
import { contentHash } from "../../src/memories/content-hash.js";
import { duplicateKey } from "../../src/recall/scoring.js";

// Every computation on user text on the write and recall paths must be linear. These inputs are 8 times
// the largest content (128 KiB): a quadratic step takes seconds on them (16 KiB already took ~130 ms),
// a linear one milliseconds, so a bound of one second cannot flake and still catches a regression.
const size = 131_072;
const boundMs = 1_000;

const timed = <T>(work: () => T): number => {
  const started = performance.now();
  work();
  return performance.now() - started;
};

const adversarial: Record<string, string> = {
  "one letter": "x".repeat(size),
  "dots inside a word": `a${".".repeat(size - 2)}b`,
  "dashes after a letter": `x${"-".repeat(size - 1)}`,
  "letters and dashes": "a-".repeat(size / 2),
  "mixed case": "Ab".repeat(size / 2),
  "spaces then a letter": `${" ".repeat(size - 1)}x`,
  "sentence ends": ". ".repeat(size / 2),
  "colons and spaces": ": ".repeat(size / 2),
  contractions: "n't".repeat(size / 3),
  "preference markers": "x over ".repeat(size / 7),
  "digits and commas": "1,".repeat(size / 2),
  apostrophes: "'s".repeat(size / 2),
  "clause separators": " and ,".repeat(size / 6),
  "spaces after a comma": `a,${" ".repeat(size - 3)}b`,
  "three long clauses": `${"x ".repeat(size / 8)}, ${"y ".repeat(size / 8)}; ${"z ".repeat(size / 8)} and w`,
  "changes without a target": "switched from ".repeat(size / 14),
  "copulas and determiners": "is now the ".repeat(size / 11),
};

describe("text processing on adversarial input is linear", () => {
  it.each(Object.entries(adversarial))("reads a statement and normalises the content of %s", (_, text) => {
    expect(timed(() => statementOf(text))).toBeLessThan(boundMs);
    expect(timed(() => duplicateKey(text))).toBeLessThan(boundMs);
    expect(timed(() => contentHash(text))).toBeLessThan(boundMs);
  });

  it("compares two long, different statements in bounded time", () => {
    const words = (offset: number) => Array.from({ length: 6_000 }, (_, i) => `w${(i * 7 + offset) % 997}`);
    expect(timed(() => diffHunks(words(0), words(1)))).toBeLessThan(boundMs / 4);
    const older = words(0).join(" ");
    const newer = words(3).join(" ");
    expect(timed(() => detectContradiction(older, newer))).toBeLessThan(boundMs);
  });

  it("keeps the exact diff of sentences and still finds a changed value after a long shared beginning", () => {
    expect(diffHunks(["user", "live", "berlin"], ["user", "live", "munich"])).toEqual([{ aStart: 2, bStart: 2, removed: [2], added: [2] }]);
    expect(diffHunks(["a", "x", "b"], ["a", "b", "c"])).toEqual([
      { aStart: 1, bStart: 1, removed: [1], added: [] },
      { aStart: 3, bStart: 2, removed: [], added: [2] },
    ]);
    const shared = Array.from({ length: 2_000 }, (_, i) => `alpha${i}`).join(" ");
    expect(detectContradiction(`${shared} The office is in Berlin`, `${shared} The office is in Munich`)?.rule).toBe("value");
  });

  it("finds preferences as before", () => {
    expect(statementOf("I prefer tea over coffee").preference).toEqual(["tea", "coffe"]);
    expect(statementOf("Use tabs instead of spaces").preference).toEqual(["tab", "spac"]);
    expect(statementOf("overall fine").preference).toBeNull();
  });
});
