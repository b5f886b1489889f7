import { readFileSync } from "node:fs";
import { parseDocument } from "yaml";
import { describe, expect, it } from "vitest";
import { importSkillMd } from "../../src/skills/skill-import.js";
import { frontmatterLimits, splitSkillMd, splitTools, writeSkillMd } from "../../src/skills/skill-md.js";
import { draftOf } from "../../src/skills/skill-rules.js";

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
const fixtures = ["block-scalars.md", "crlf-bom.md", "unknown-keys.md", "pdf-tools/SKILL.md"];
const noOptions = { files: [], containers: [], tags: [] };

/** The frontmatter as values (failsafe: every scalar a string), for comparing files whatever their YAML spelling. */
function frontmatterValues(text: string) {
  const split = splitSkillMd(text);
  if ("rule" in split) throw new Error(split.message);
  return { values: parseDocument(split.yaml, { schema: "failsafe" }).toJS(), body: split.body };
}

function exportOf(text: string): string {
  const imported = importSkillMd(text, noOptions);
  const d = draftOf(imported.fields, imported.extraFrontmatter);
  return writeSkillMd({
    slug: d.slug,
    description: d.description,
    license: d.license,
    compatibility: d.compatibility,
    allowedTools: d.allowedTools,
    metadata: d.metadata,
    extra: d.extraFrontmatter,
    body: d.content,
  });
}

describe("SKILL.md import and export", () => {
  it.each(fixtures)("exports %s with the same frontmatter values and the identical body", (name) => {
    const original = fixture(name);
    const exported = exportOf(original);
    const before = frontmatterValues(original);
    const after = frontmatterValues(exported);
    expect(after.body).toBe(before.body);
    // allowed-tools is written back space-separated; the tools are the same.
    const { "allowed-tools": toolsBefore, ...restBefore } = before.values;
    const { "allowed-tools": toolsAfter, ...restAfter } = after.values;
    expect(restAfter).toEqual(restBefore);
    expect(splitTools(toolsAfter ?? "")).toEqual(splitTools(toolsBefore ?? ""));
    // Import of the export gives the same fields again.
    expect(importSkillMd(exported, noOptions).fields).toEqual(importSkillMd(original, noOptions).fields);
  });

  it("reads block scalars, folded scalars, quoted strings, nested metadata and tool patterns", () => {
    const { fields, warnings } = importSkillMd(fixture("block-scalars.md"), noOptions);
    expect(fields.slug).toBe("release-notes");
    expect(fields.description).toBe(
      'Drafts release notes from merged pull requests.\nUse when the user asks "what changed since v1.2?" or wants a changelog: grouped by area.',
    );
    expect(fields.compatibility).toBe("Needs git and network access to the code host's API.\n");
    expect(fields.allowedTools).toEqual(["Bash(git log:*)", "Read", "Write"]);
    expect(fields.metadata).toEqual({ author: "Ada Lovelace", version: "1.0", reviewed: "yes" });
    expect(fields.content).toContain("\n---\n\nGroup them");
    expect(fields.content).toContain("日本語, emoji 🚀");
    expect(warnings).toEqual([]);
  });

  it("drops a BOM, keeps CRLF bodies byte for byte, and a body without a trailing newline", () => {
    const { fields } = importSkillMd(fixture("crlf-bom.md"), noOptions);
    expect(fields.slug).toBe("csv-cleaner");
    expect(fields.description).toBe("Cleans CSV files: trims cells, fixes encodings, and removes duplicate rows.");
    expect(fields.license).toBe("Complete terms in LICENSE.txt");
    expect(fields.metadata).toEqual({ source: "https://example.com/a:b" });
    expect(fields.content).toBe("\r\n# CSV cleaner\r\n\r\nRun `python scripts/clean.py input.csv`.\r\nNo trailing newline here");
  });

  it("keeps unknown keys and reports each as a warning", () => {
    const imported = importSkillMd(fixture("unknown-keys.md"), noOptions);
    expect(imported.extraFrontmatter).toEqual({ model: "claude-opus", "user-invocable": "true", hooks: { pre: "lint", post: ["format", "test"] } });
    expect(imported.warnings.map((w) => w.field)).toEqual(["frontmatter.model", "frontmatter.user-invocable", "frontmatter.hooks"]);
  });

  it("answers every violation at once, naming the frontmatter field and rule", () => {
    const text = `---\nname: Not A Slug\ndescription: ""\ncompatibility: ${"x".repeat(2049)}\nmetadata:\n  nested:\n    deep: 1\nallowed-tools: [1, [2]]\n---\nbody\n`;
    let details: Record<string, string> = {};
    try {
      importSkillMd(text, noOptions);
    } catch (err) {
      details = (err as { details: Array<{ value: { metadata: Record<string, string> } }> }).details[0]!.value.metadata;
    }
    expect(details).toMatchObject({
      "frontmatter.name": "format",
      "frontmatter.description": "required",
      "frontmatter.compatibility": "max_length",
      "frontmatter.metadata.nested": "type",
      "frontmatter.allowed-tools": "type",
    });
    expect(details.field).toBeDefined();
  });

  it("imports what agents load past the format's limits, with a warning naming the field and the limit", () => {
    const description = `Build apps with the Claude API or Anthropic SDKs. ${"Use it when the code imports the SDK, calls the Messages API, streams, uses tools or batches. ".repeat(12)}`.trim();
    expect(description.length).toBeGreaterThan(1024);
    const compatibility = "Needs network access to the API and an API key. ".repeat(12).trim();
    const imported = importSkillMd(`---\nname: claude-api\ndescription: ${description}\ncompatibility: ${compatibility}\n---\nbody\n`, noOptions);
    expect(imported.fields.description).toBe(description);
    expect(imported.fields.compatibility).toBe(compatibility);
    expect(imported.warnings).toEqual([
      { field: "frontmatter.description", message: `is ${description.length} characters; the Agent Skills format allows 1024 (stored as written)` },
      { field: "frontmatter.compatibility", message: `is ${compatibility.length} characters; the Agent Skills format allows 500 (stored as written)` },
    ]);
    // Past the service's own storage limit it is refused.
    expect(() => importSkillMd(`---\nname: claude-api\ndescription: ${"d".repeat(4097)}\n---\nbody\n`, noOptions)).toThrow(/frontmatter.description: must be at most 4096 characters/);
  });

  it("rejects missing name and description, and files without frontmatter", () => {
    expect(() => importSkillMd("---\nlicense: MIT\n---\nbody", noOptions)).toThrow(/frontmatter.name: is required; frontmatter.description: is required/);
    expect(() => importSkillMd("# just markdown", noOptions)).toThrow(/content: must start with YAML frontmatter/);
    expect(() => importSkillMd("---\nname: a\n", noOptions)).toThrow(/not closed/);
  });

  it("rejects an alias inside the node its anchor names (a cycle no JSON can hold); other aliases stay", () => {
    for (const cycle of ["a: &a [*a]", "metadata: &m {self: *m}", "a: &a {b: [x, {c: *a}]}"]) {
      expect(() => importSkillMd(`---\nname: loop\ndescription: d\n${cycle}\n---\n`, noOptions), cycle).toThrow(/content: frontmatter must not use an alias inside the node its anchor names/);
    }
    const shared = importSkillMd("---\nname: shared\ndescription: &d the same twice\ncompatibility: *d\n---\n", noOptions);
    expect(shared.fields.compatibility).toBe("the same twice");
  });

  it("bounds the frontmatter: an alias bomb and an oversized frontmatter fail fast", () => {
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 0; i < 20; i++) bomb.push(`${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`);
    const started = performance.now();
    expect(() => importSkillMd(`---\nname: bomb\ndescription: d\n${bomb.join("\n")}\n---\n`, noOptions)).toThrow(/frontmatter: must have at most 16 YAML anchors and aliases/);
    // A bomb within the anchor and alias count is stopped by the expansion bound.
    const small = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c, *c]";
    expect(() => importSkillMd(`---\nname: bomb\ndescription: d\n${small}\n---\n`, noOptions)).toThrow(/content: frontmatter is not valid YAML/);
    expect(() => importSkillMd(`---\nname: big\ndescription: ${"d".repeat(70_000)}\n---\nbody`, noOptions)).toThrow(/frontmatter must end within 65536 bytes/);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  describe("refuses frontmatter over its limits before parsing, naming the rule", () => {
    const fm = (yaml: string) => `---\nname: s\ndescription: d\n${yaml}\n---\nbody\n`;
    const keys = (n: number, indent = "") => Array.from({ length: n }, (_, j) => `${indent}k${j}: v`).join("\n");
    const nested = (n: number) => Array.from({ length: n }, (_, j) => `${" ".repeat(j)}a:`).join("\n") + " v";
    const refusals: Array<[string, string, string]> = [
      ["6,500 top-level keys", fm(keys(6_500)), "max_keys"],
      ["4,000 keys under metadata", fm(`metadata:\n${keys(4_000, "  ")}`), "max_keys"],
      ["a flow mapping of 6,000 keys", fm(`x: {${Array.from({ length: 6_000 }, (_, j) => `k${j}: v`).join(", ")}}`), "max_keys"],
      ["60,000 commas", fm(`x: [${",".repeat(60_000)}]`), "max_keys"],
      ["20,000 tags", fm(`x: ${"!t ".repeat(20_000)}v`), "max_keys"],
      ["lists nested 30,000 deep", fm(`x: ${"[".repeat(30_000)}${"]".repeat(30_000)}`), "max_depth"],
      ["mappings nested 12,000 deep", fm(`x: ${"{a: ".repeat(12_000)}1${"}".repeat(12_000)}`), "max_depth"],
      ["block mappings nested 300 deep", fm(nested(300)), "max_depth"],
      ["block lists nested 300 deep", fm(`x:\n${"- ".repeat(300)}a`), "max_depth"],
      ["5,000 aliases", fm(`a: &a v\n${Array.from({ length: 5_000 }, (_, j) => `k${j}: *a`).join("\n")}`), "max_aliases"],
      ["20,000 comment lines", fm("#c\n".repeat(20_000)), "max_tokens"],
    ];
    it.each(refusals)("%s", (_shape, text, rule) => {
      const started = performance.now();
      let error: unknown;
      try {
        importSkillMd(text, noOptions);
      } catch (err) {
        error = err;
      }
      // A bound for a loaded machine: these took 0.1-2 s before the scan and take 0.1-7 ms with it.
      expect(performance.now() - started).toBeLessThan(250);
      expect(error).toMatchObject({ details: [{ value: { metadata: { field: "frontmatter", rule } } }] });
    });

    it("keeps the limits themselves and long scalars", () => {
      expect(importSkillMd(fm(keys(frontmatterLimits.keys / 2 - 4)), noOptions).warnings).toHaveLength(frontmatterLimits.keys / 2 - 4);
      // Nesting up to the depth: x's value is depth 1.
      expect(importSkillMd(fm(`x:\n${nested(frontmatterLimits.depth).replace(/^/gm, " ")}`), noOptions).extraFrontmatter.x).toBeDefined();
      expect(() => importSkillMd(fm(`x:\n${nested(frontmatterLimits.depth + 1).replace(/^/gm, " ")}`), noOptions)).toThrow(/max_depth|nest/);
      const anchors = Array.from({ length: frontmatterLimits.aliases / 2 }, (_, j) => `a${j}: &a${j} v\nb${j}: *a${j}`).join("\n");
      expect(Object.keys(importSkillMd(fm(anchors), noOptions).extraFrontmatter)).toHaveLength(frontmatterLimits.aliases);
      const long = importSkillMd(fm(`x: ${"y".repeat(40_000)}\ny: |\n${"  line\n".repeat(3_000)}`), noOptions);
      expect((long.extraFrontmatter.x as string).length).toBe(40_000);
    });
  });
});
