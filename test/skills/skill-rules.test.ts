import { describe, expect, it } from "vitest";
import { splitTools } from "../../src/skills/skill-md.js";
import { slugFrom } from "../../src/skills/skill-rules.js";
import { skillRelevance } from "../../src/skills/skill-scoring.js";
import { embeddedText, keywordBodyChars, keywordText, whenToUseChars, whenToUseSection } from "../../src/skills/skill-text.js";

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

  it("ranks hybrid by cosine with a little keyword relevance, relative to the query's best match", () => {
    expect(skillRelevance("semantic", 0.5, 100, 100)).toBe(0.5);
    expect(skillRelevance("semantic", -0.2, 0, 0)).toBe(0);
    expect(skillRelevance("keyword", 0.9, 12, 24)).toBe(0.5);
    expect(skillRelevance("hybrid", 0.5, 12, 24)).toBeCloseTo(0.85 * 0.5 + 0.15 * 0.5);
    expect(skillRelevance("hybrid", 0.5, 3, 3)).toBeCloseTo(0.85 * 0.5 + 0.15);
    expect(skillRelevance("hybrid", 0.5, 0, 0)).toBeCloseTo(0.425);
  });

  it("embeds the name, the description and the body's When to use section", () => {
    const body = "# T\n\nIntro.\n\n## When to use\n\n- The user asks for **X**.\n1. Or Y.\n\n### Detail\nZ\n\n## Steps\n\nNot this.";
    expect(whenToUseSection(body)).toBe("The user asks for X . Or Y. Detail Z");
    expect(embeddedText({ name: "n", description: "d", content: body })).toBe("n\nd\nThe user asks for X . Or Y. Detail Z");
    expect(embeddedText({ name: "n", description: "d", content: "# T\n\nNo such section." })).toBe("n\nd");
    expect(whenToUseSection(`## When to use\n${"word ".repeat(1000)}`)).toHaveLength(whenToUseChars);
    expect(keywordText({ name: "n", description: "d", content: "x".repeat(100_000) })).toHaveLength(4 + keywordBodyChars);
  });
});
