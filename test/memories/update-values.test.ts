import { describe, expect, it } from "vitest";
import { namedChangeOf, valueKey } from "../../src/memories/contradictions/named-change.js";
import { wordsOf } from "../../src/memories/contradictions/nlp.js";
import { onlyValueOf, typedValuesOf } from "../../src/memories/contradictions/typed-values.js";

// The pure readers behind the update rules that need no sentence frame: a change that writes its old
// value, and values whose form names their attribute.

describe("a change that names its old value", () => {
  it("reads an arrow, a \"(was …)\" and an \"instead of …\", with the old and the new value", () => {
    expect(namedChangeOf("Standup: Tue 9:30 → Wed 10:00, same room.")).toMatchObject({ old: ["tuesday", "9:30"], value: ["wednesday", "10:00"], marker: "→" });
    expect(namedChangeOf("Region -> eu-west-1 (from us-east-1)")).toMatchObject({ value: ["eu-west-1"], marker: "->" });
    expect(namedChangeOf("On-call lead: Kofi (was Mara).")).toMatchObject({ old: ["mara"], oldText: "Mara", value: ["kofi"], marker: "was" });
    expect(namedChangeOf("Invoices are now approved by Lee instead of Ann.")).toMatchObject({ old: ["ann"], value: ["lee"], marker: "instead of" });
    expect(namedChangeOf("Tier: Gold → Platinum (annual billing)")).toMatchObject({ valueText: "Platinum" });
  });

  it("reads nothing without a marker, when both sides are one value, or in a long text", () => {
    expect(namedChangeOf("Standup is at 9:30 on Tuesdays.")).toBeNull();
    expect(namedChangeOf("Plan: Pro → Pro")).toBeNull();
    expect(namedChangeOf(`${"x ".repeat(200)}a → b`)).toBeNull();
  });

  it("keys weekdays in full and singular, and drops outer punctuation", () => {
    expect(valueKey("Wed")).toBe("wednesday");
    expect(valueKey("Thursdays,")).toBe("thursday");
    expect(valueKey("($65k)")).toBe("$65k");
  });
});

describe("values whose form names their attribute", () => {
  it("finds emails, phone numbers, street and web addresses", () => {
    const values = typedValuesOf("Mail li.wei@example.com or call +44 20 7946 0958; office at 12 Queen Street, docs at https://docs.example.com.");
    expect(values.map((v) => [v.form, v.text])).toEqual([
      ["email", "li.wei@example.com"],
      ["web address", "https://docs.example.com"],
      ["street address", "12 Queen Street"],
      ["phone", "+44 20 7946 0958"],
    ]);
  });

  it("takes no year range, time or short number for a phone number", () => {
    expect(typedValuesOf("From 2024-2026 the standup was at 9:30 in room 4 12")).toEqual([]);
  });

  it("gives the one value of a form, or none when there are two", () => {
    const two = typedValuesOf("a@x.io and b@x.io");
    expect(onlyValueOf(two, "email")).toBeNull();
    expect(onlyValueOf(typedValuesOf("A@x.io"), "email")?.key).toBe("a@xio");
  });
});

describe("the tagger's slips mended for agent notes", () => {
  const tags = (text: string) => wordsOf(text).map((w) => `${w.lower}/${w.pos}`);
  it("reads a status written with a negation as one word, not a plan", () => {
    expect(tags("The bug was closed as won't-fix")).toContain("won't-fix/ADJ");
  });
  it("reads a participle between a possessive and a noun as an adjective", () => {
    expect(tags("The deal's expected close date is June 15")).toContain("expected/ADJ");
  });
  it("reads a verb and its object after a pronoun, and a possessed noun before a verb", () => {
    expect(tags("We keep logs for ninety days").slice(1, 3)).toEqual(["keep/VERB", "logs/NOUN"]);
    expect(tags("Omar's address changed to 52 Station Lane")).toContain("address/NOUN");
  });
});
