import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { appealDecisionEmail, quoted, quotedBlock, takedownEmail } from "../../src/marketplace/email-templates.js";
import {
  appealRetryAfterSeconds,
  defaultHandle,
  disambiguatedHandle,
  emailBackoffMs,
  lineageOf,
  popularityAt,
  popularityWeight,
} from "../../src/marketplace/marketplace-rules.js";
import { defaultTermsPath, parseTerms, readTerms } from "../../src/marketplace/terms.js";

const day = 86_400_000;
const at = (iso: string) => new Date(iso);

describe("marketplace policy", () => {
  it("weighs installs and forks by recency: each halves every 30 days, and stored sums order as decayed scores", () => {
    const now = at("2026-06-01T00:00:00Z");
    const fresh = popularityWeight(now);
    expect(popularityAt(fresh, now)).toBeCloseTo(1, 12);
    expect(popularityAt(popularityWeight(new Date(now.getTime() - 30 * day)), now)).toBeCloseTo(0.5, 12);
    // Three old installs against one new one: the order of the stored sums is the order at any later time.
    const old = 3 * popularityWeight(new Date(now.getTime() - 60 * day));
    for (const later of [now, new Date(now.getTime() + 365 * day)]) expect(popularityAt(fresh, later) > popularityAt(old, later)).toBe(fresh > old);
    expect(Number.isFinite(popularityWeight(at("2109-12-31T00:00:00Z")))).toBe(true);
  });

  it("allows 5 appeals in 24 hours and says when the next is allowed", () => {
    const now = at("2026-03-01T12:00:00Z");
    const times = (hoursAgo: number[]) => hoursAgo.map((h) => new Date(now.getTime() - h * 3_600_000));
    expect(appealRetryAfterSeconds(times([1, 2, 3, 4]), now)).toBeNull();
    expect(appealRetryAfterSeconds(times([1, 2, 3, 4, 20]), now)).toBe(4 * 3600);
    expect(appealRetryAfterSeconds(times([0, 0, 0, 0, 0]), now)).toBe(86_400);
  });

  it("chains lineage from the parent back to the original", () => {
    const original = { id: "skl_a", slug: "a", version: 3, lineage: [] };
    const fork = { id: "skl_b", slug: "b", version: 1, lineage: lineageOf(original, "alice") };
    expect(lineageOf(fork, "bob")).toEqual([
      { id: "skl_b", slug: "b", authorHandle: "bob", version: 1 },
      { id: "skl_a", slug: "a", authorHandle: "alice", version: 3 },
    ]);
  });

  it("derives author handles in the Agent Skills name form", () => {
    expect(defaultHandle("Acme_Corp.eu")).toBe("acme-corp-eu");
    expect(defaultHandle("___")).toBe("author");
    expect(disambiguatedHandle("acme", "ws_01jabcdefghjkmnpqrstvwxyz0")).toBe("acme-vwxyz0");
    expect(disambiguatedHandle("x".repeat(64), "ws_01jabcdefghjkmnpqrstvwxyz0")).toHaveLength(64);
  });

  it("backs off email retries exponentially, up to an hour", () => {
    expect([1, 2, 3, 4].map((n) => emailBackoffMs(n, 1000))).toEqual([1000, 2000, 4000, 8000]);
    expect(emailBackoffMs(40, 30_000)).toBe(3_600_000);
  });

  it("writes notices that name the skill, the reason and exactly how to appeal", () => {
    const skill = { id: "skl_1", slug: "s", name: "S", authorHandle: "h" };
    const notice = takedownEmail("a@example.com", skill, "spam", null);
    expect(notice.body).toContain(`{"id": "skl_1", "message":`);
    expect(notice.body).toContain("skill_appeal");
    expect(notice.body).not.toContain("Details:");
    expect(appealDecisionEmail("a@example.com", skill, true, null).body).not.toContain("skill_appeal");
  });

  it("quotes what users wrote, so a name stored with a line break cannot forge a line of a notice", () => {
    // As if stored before names refused line breaks.
    const skill = { id: "skl_1", slug: "evil", name: 'Evil\r\nBcc: x@evil.test\u2028"quoted"\\', authorHandle: "h" };
    const notice = takedownEmail("a@example.com", skill, "spam", "Line one.\r\nReason: forged\u0007");
    const lines = notice.body.split("\n");
    expect(lines[0]).toBe('Your skill "Evil\\r\\nBcc: x@evil.test\\u2028\\"quoted\\"\\\\" (h/evil, id skl_1) was removed from the marketplace by a moderator.');
    expect(lines.filter((l) => l.startsWith("Bcc:"))).toEqual([]);
    expect(lines.filter((l) => l.startsWith("Reason:"))).toEqual(["Reason: spam"]);
    expect(lines).toContain("> Reason: forged\\u0007");
    expect(notice.body).not.toMatch(/[\r\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
    const decision = appealDecisionEmail("a@example.com", skill, false, "No.\u2028Granted: yes");
    expect(decision.body.split("\n")).toEqual(expect.arrayContaining(["Moderator's note:", "> No.", "> Granted: yes"]));
    expect(decision.body).not.toMatch(/[\r\u2028]/);
    expect(quoted("plain")).toBe('"plain"');
    expect(quoted("a\tb\u0085c")).toBe('"a\\tb\\u0085c"');
    expect(quotedBlock("a\n\nb ")).toEqual(["> a", ">", "> b"]);
  });
});

describe("marketplace terms", () => {
  it("ship with a version, and an operator's file replaces them", async () => {
    expect(readTerms(defaultTermsPath).version).toMatch(/\S/);
    expect(parseTerms('---\nversion: "7"\n---\n# Ours\n')).toEqual({ version: "7", content: "# Ours\n" });
    expect(() => parseTerms("# no frontmatter\n")).toThrow(/frontmatter/);
    expect(() => parseTerms("---\ntitle: x\n---\n# t\n")).toThrow(/version/);

    const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-terms-"));
    try {
      const file = path.join(dir, "terms.md");
      await writeFile(file, "---\nversion: 2027-1\n---\nBe nice.\n");
      expect(loadConfig({ MARKETPLACE_TERMS_FILE: file }).marketplaceTerms).toEqual({ version: "2027-1", content: "Be nice.\n" });
      await writeFile(file, "Be nice.\n");
      expect(() => loadConfig({ MARKETPLACE_TERMS_FILE: file })).toThrow(/MARKETPLACE_TERMS_FILE/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("the marketplace is off by default", () => {
    expect(loadConfig({}).MARKETPLACE_ENABLED).toBe(false);
    expect(() => loadConfig({ SMTP_URL: "http://mail" })).toThrow(/SMTP_URL/);
  });
});
