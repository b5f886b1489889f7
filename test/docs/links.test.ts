import { describe, expect, it } from "vitest";
import { anchorsOf, brokenReason, documentationFiles, headingSlug, relativeLinks } from "./markdown.js";

describe("documentation links", () => {
  it("computes anchors as GitHub does", () => {
    expect(headingSlug("Contradictions, shadowing, duplicates and versions")).toBe("contradictions-shadowing-duplicates-and-versions");
    expect(headingSlug("LD_PRELOAD, MALLOC_CONF")).toBe("ld_preload-malloc_conf");
    expect(headingSlug("Quantized index (IVF_RQ)")).toBe("quantized-index-ivf_rq");
    expect([...anchorsOf("# A\n## B\n```\n# not a heading\n```\n## B\n")]).toEqual(["a", "b", "b-1"]);
  });

  it("finds README.md and the docs folder", () => {
    const files = documentationFiles();
    expect(files).toContain("README.md");
    expect(files).toContain("docs/README.md");
    expect(files.length).toBeGreaterThan(10);
  });

  it("resolves every relative link and anchor in README.md and docs/", () => {
    const broken = documentationFiles()
      .flatMap(relativeLinks)
      .map((link) => ({ link, reason: brokenReason(link) }))
      .filter(({ reason }) => reason !== undefined)
      .map(({ link, reason }) => `${link.file}:${link.line}: (${link.target}) ${reason}`);
    expect(broken).toEqual([]);
  });
});
