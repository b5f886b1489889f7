import { describe, expect, it } from "vitest";
import { splitTools } from "../../src/skills/skill-md.js";
import { slugFrom } from "../../src/skills/skill-rules.js";
import { skillRelevance } from "../../src/skills/skill-scoring.js";

describe("skill rules", () => {
  it("derives slugs that follow the Agent Skills name rule", () => {
    expect(slugFrom("Deploy Checklist!")).toBe("deploy-checklist");
    expect(slugFrom("  --PDF   tools--  ")).toBe("pdf-tools");
    expect(slugFrom("Crème brûlée")).toBe("creme-brulee");
    expect(slugFrom("!!!")).toBe("");
    const long = slugFrom(`${"a".repeat(63)} b`);
    expect(long).toBe("a".repeat(63));
    expect(slugFrom("x".repeat(100_000))).toHaveLength(64);
  });

  it("splits allowed-tools on spaces and commas, not inside parentheses", () => {
    expect(splitTools("Read Grep")).toEqual(["Read", "Grep"]);
    expect(splitTools("Read, Grep,Glob")).toEqual(["Read", "Grep", "Glob"]);
    expect(splitTools("Bash(git log:*) Read")).toEqual(["Bash(git log:*)", "Read"]);
    expect(splitTools("  ")).toEqual([]);
  });

  it("ranks hybrid by cosine with a little keyword relevance", () => {
    expect(skillRelevance("semantic", 0.5, 100)).toBe(0.5);
    expect(skillRelevance("semantic", -0.2, 0)).toBe(0);
    expect(skillRelevance("keyword", 0.9, 12)).toBe(0.5);
    expect(skillRelevance("hybrid", 0.5, 12)).toBeCloseTo(0.8 * 0.5 + 0.2 * 0.5);
  });
});
