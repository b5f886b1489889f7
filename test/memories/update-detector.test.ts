import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { asksAbout, factsOf, queryAttributes } from "../../src/memories/contradictions/facts.js";
import { readText } from "../../src/memories/contradictions/frames.js";
import { wordsOf } from "../../src/memories/contradictions/nlp.js";
import { assessPair, detectContradiction } from "../../src/memories/contradictions/rules.js";
import { statementOf } from "../../src/memories/contradictions/statement.js";

// The update detector reads statements (subject, attribute, value, markers), so updates phrased the way
// agents write them are found, and look-alikes are kept beside with a reason. Similarities below are the
// built-in model's cosines for the pairs where a rule depends on them.

const assess = (older: string, newer: string, similarity = 0) => assessPair(statementOf(older), statementOf(newer), similarity);
const reasonOf = (older: string, newer: string, similarity = 0) => {
  const a = assess(older, newer, similarity);
  return a?.kind === "update" ? `${a.verdict.rule}: ${a.verdict.reason}` : null;
};
const keptOf = (older: string, newer: string, similarity = 0) => {
  const a = assess(older, newer, similarity);
  return a?.kind === "kept" ? a.reason : null;
};

describe("updates phrased as agents write them", () => {
  it("names the subject, the attribute, the old and new value and the rule", () => {
    expect(reasonOf("The user lives in Berlin.", "The user moved to Munich last month.")).toBe("attribute: residence of the user: Berlin → Munich (moved)");
    expect(reasonOf("The user's favourite editor is Vim.", "The user switched to VS Code as their main editor.")).toBe(
      "attribute: editor of the user: Vim → VS Code (switched)",
    );
    expect(reasonOf("Deploys happen on Fridays.", "Deploys moved from Fridays to Tuesdays.")).toBe("value: switched from friday");
    expect(reasonOf("Alex's manager is Dana.", "Alex reports to Priya now.")).toBe("attribute: manager of Alex: Dana → Priya (now)");
    expect(reasonOf("The API rate limit is 100 requests per second.", "The API rate limit was raised to 250 requests per second.")).toBe(
      "attribute: value of the API rate limit: 100 requests per second → 250 requests per second (raised)",
    );
    expect(reasonOf("The project uses PostgreSQL 14.", "The project was upgraded to PostgreSQL 16.")).toBe(
      "attribute: database of the project: PostgreSQL 14 → PostgreSQL 16 (upgraded)",
    );
    expect(reasonOf("Alice lives in Berlin", "Alice moved to Munich in October 2026 and now lives there")).toBe("attribute: residence of Alice: Berlin → Munich (moved)");
    expect(reasonOf("Priya leads the payments team", "Marco took over the payments team from Priya")).toBe(
      "change: manager of payments team: Priya → Marco (took from Priya)",
    );
    expect(reasonOf("The user's car is a Golf", "The user sold the Golf and bought a Tesla Model 3")).toBe("removal: car of the user: Golf is gone (sold Golf)");
    expect(reasonOf("The user is vegetarian", "The user eats meat again")).toBe("attribute: diet of the user: vegetarian → eats meat");
  });

  it("settles a broad attribute by the embedder's similarity: tea and coffee are of one kind, dark mode and font size are not", () => {
    expect(reasonOf("Alex prefers tea.", "Alex prefers coffee.", 0.8)).toBe("attribute: preference of Alex: tea → coffee");
    expect(reasonOf("The user prefers dark mode", "The user prefers a large font size", 0.39)).toBeNull();
  });

  it("finds a change announced on the older statement's topic that no frame names", () => {
    expect(reasonOf("The nightly finance report goes out by email.", "The nightly finance report moved to a Slack digest.", 0.52)).toBe(
      'topic: finance, report changed ("moved"): now slack, digest',
    );
    // Below the similarity the topic rule needs, the pair is a doubt for the judge.
    expect(assess("The nightly finance report goes out by email.", "The nightly finance report moved to a Slack digest.", 0.3)?.kind).toBe("doubtful");
  });

  it("reads terse notes, a question with its answer, and a leading time phrase", () => {
    expect(reasonOf("Acme's plan is Business, 40 seats.", "Plan: Business → Enterprise (60 seats).", 0.6)).toBe(
      'change: value of plan, seats: Business → Enterprise ("→" names the old value)',
    );
    expect(reasonOf("Default branch: master.", "Default branch: main (was master).", 0.9)).toBe('change: value of default, branch: master → main ("was" names the old value)');
    expect(reasonOf("Production log retention is 30 days.", "How long do we keep production logs now? 90 days.", 0.64)).toMatch(/^topic: production/);
    expect(reasonOf("Stark Logistics' account manager is Dana.", "Since the Q3 review, Stark Logistics' account manager has been Felix.", 0.63)).toBe(
      "attribute: manager of Stark Logistics: Dana → Felix",
    );
    expect(reasonOf("Maya's school day ends at 3:15 pm.", "Since the start of the spring term, Maya's school day ends at 3:30 pm.", 0.85)).toBe(
      "attribute: Maya's school day, end at: 3:15 pm → 3:30 pm",
    );
    expect(reasonOf("Sam follows a vegetarian diet.", "Since February, Sam has been pescatarian, having added fish back into his diet.", 0.68)).toBe(
      "attribute: diet of Sam: vegetarian diet → pescatarian",
    );
  });

  it("takes a change that names the old value, whatever the attribute: an arrow, \"(was …)\", \"instead of …\"", () => {
    expect(reasonOf("Yoga class: Mondays 6 pm.", "Yoga class: Mon 6 pm → Tue 7 pm.")).toBe('change: value of yoga, class: Mon 6 pm → Tue 7 pm ("→" names the old value)');
    expect(reasonOf("Release branch: release-4.", "Release branch: release-5 (was release-4).")).toBe('change: value of release, branch: release-4 → release-5 ("was" names the old value)');
    expect(reasonOf("Unit tests run with Jest.", "Unit tests now run with Vitest instead of Jest.")).toBe(
      'change: value of unit, tests, run: Jest → Vitest ("instead of" names the old value)',
    );
    expect(reasonOf("Omar walks the dog on Sundays.", "From this month the Sunday dog walk is done by Lina instead of Omar.")).toMatch(/Omar → Lina/);
    // The old value must be the older statement's, and "also" adds.
    expect(assess("Unit tests run with Jest.", "Unit tests run with Vitest instead of Mocha.")?.kind).not.toBe("update");
    expect(reasonOf("Yoga class: Mondays 6 pm.", "Yoga class: also Mon 6 pm → Tue 7 pm.")).toBeNull();
    expect(reasonOf("The user drinks coffee.", "The user drinks tea instead of coffee now.", 0.7)).toBe('change: value of drinks: coffee → tea ("instead of" names the old value)');
    expect(reasonOf("The user drinks coffee.", "The user's sister drinks tea instead of coffee.", 0.7)).toBeNull();
  });

  it("reads a setter verb's possessed noun as the attribute, and a passive with \"get\"", () => {
    expect(reasonOf("Nadia's dentist appointment is on June 3.", "Nadia's dentist appointment got moved to June 10.", 0.8)).toBe(
      "attribute: Nadia, dentist appointment: June 3 → June 10 (moved)",
    );
    // A modifier names no attribute: a "home router" is no residence.
    expect(reasonOf("The user's home router is a Fritzbox 7590.", "The user's home router was replaced with an Eero Pro.", 0.7)).toBe(
      "attribute: the user, home router: Fritzbox 7590 → Eero Pro (replaced)",
    );
    // "Sam's manager moved to Berlin": the manager moves, the manager is not Berlin.
    expect(assess("Sam's manager is Dana.", "Sam's manager moved to Berlin.", 0.3)?.kind).toBe("doubtful");
    expect(reasonOf("Ines is single.", "Ines got married to Paulo in June.", 0.6)).toBe("attribute: relationship status of Ines: single → married");
  });

  it("resolves \"his\"/\"her\" to the previous clause's subject, and meets an entity written in either order", () => {
    expect(reasonOf("Tom's favourite band is Blur.", "Tom went to a gig last week; his favourite band is now Pulp.", 0.7)).toMatch(/^attribute: .*Blur → Pulp/);
    expect(reasonOf("The SSL certificate for shop.example.org renews on March 2.", "The shop.example.org SSL certificate renews on April 9.", 0.9)).toMatch(
      /March 2 → April 9/,
    );
  });

  it("keeps a date that is the value and reads a label note as a statement", () => {
    expect(reasonOf("The Initech renewal's expected sign date is April 4.", "The Initech renewal's expected sign date is May 20.", 0.9)).toMatch(/April 4 → May 20/);
    expect(reasonOf("Main language of the billing worker: Python.", "The billing worker has been rewritten in Rust.", 0.3)).toBe(
      "attribute: programming language of the billing worker: Python → Rust",
    );
  });

  it("takes another email, phone number or street address under a change, and not a second one", () => {
    expect(reasonOf("Reach Priya at priya@oldco.com.", "Priya's email is now priya.k@newco.io.", 0.5)).toBe(
      'attribute: email of priya: priya@oldco.com → priya.k@newco.io ("now")',
    );
    expect(reasonOf("Deliveries for Omar go to 7 Birch Road, Leeds.", "Omar's address changed to 52 Station Lane, York.", 0.4)).toBe(
      'attribute: street address of omar: 7 Birch Road → 52 Station Lane ("changed")',
    );
    expect(reasonOf("Reach Priya at priya@oldco.com.", "Priya also has a personal email now, priya@home.net.", 0.5)).toBeNull();
    expect(reasonOf("Kai's mobile number is 0161 496 0000.", "Kai has a new mobile number, 0161 496 0999.", 0.8)).toMatch(/0161 496 0000 → 0161 496 0999/);
    // A to-do's "new" is no new value: "update the README with the new bucket names".
    expect(reasonOf("Harbor writes raw events to the bucket harbor-raw.", "PROJ-9: update Harbor's README with the new region and bucket names", 0.6)).toBeNull();
  });

  it("reads a subjectless report, a plan on a noun, another amount of one unit and a change to another known value", () => {
    expect(reasonOf("The frontend is built with webpack 4.", "Upgraded webpack to 5 for the frontend build.", 0.8)).toBe('topic: frontend, webpack changed ("Upgraded")');
    expect(reasonOf("The frontend is built with webpack 4.", "Upgrade webpack to 5 for the frontend build.", 0.8)).toBeNull();
    expect(reasonOf("Globex's support tier is Basic.", "Globex is on Premium support as of this week.", 0.6)).toBe("attribute: plan of Globex: Basic → Premium support (as of)");
    expect(reasonOf("Backups are kept for ten days.", "Backup retention was cut to 7 days.", 0.3)).toBe('topic: backup changed ("cut"): 10 → 7 day');
    expect(reasonOf("All our services run on Heroku.", "The team completed the move to AWS last quarter.", 0.3)).toBe(
      "change: hosting of service: heroku → aws (a change to another hosting)",
    );
    // Two subjects of their own: the staging cluster's move says nothing of the API's host.
    expect(keptOf("The API runs on Heroku.", "The staging cluster moved to AWS.", 0.3)).toBe("another subject: hosting of the staging cluster, not of the API");
  });

  it("keeps a vague time made exact, and a continent against a place in it, from being changes", () => {
    expect(reasonOf("The offsite is in early October.", "The offsite is on Thursday, October 9, in Lisbon.", 0.7)).toBeNull();
    expect(assess("Kenji is in Asia.", "Kenji is based in Osaka.", 0.7)?.kind).toBe("doubtful");
  });

  it("reads a negation and an opposite as before", () => {
    expect(detectContradiction("The user owns a car", "The user does not own a car")?.rule).toBe("negation");
    expect(detectContradiction("The staging cluster is public", "The staging cluster is private")?.rule).toBe("opposite");
  });
});

describe("look-alikes are kept beside, with why", () => {
  it("an addition, a many-valued attribute, another subject", () => {
    expect(keptOf("The user likes Thai food", "The user also enjoys Ethiopian food")).toBe('an addition ("also"): likes of the user');
    expect(keptOf("The user speaks English", "The user speaks Dutch")).toBe("languages can hold several values: languages of the user");
    expect(keptOf("The user lives in Lisbon", "The user's sister lives in Rotterdam")).toBe("another subject: residence of the user's sister, not of the user");
  });

  it("another scope, another period, another time of day, another qualifier", () => {
    expect(keptOf("The user prefers TypeScript for new services", "The user prefers Python for data scripts")).toBe(
      "another scope: preference of the user for data scripts, not for new services",
    );
    expect(keptOf("Lumen Pro costs 3.99 euros a month", "Lumen Pro costs 29 euros a year")).toBe("another period: price of Lumen Pro");
    expect(keptOf("The user drinks coffee every morning", "The user drinks tea in the afternoon")).toBe(
      "another time of day: drink of the user in the afternoon, not the morning",
    );
    expect(keptOf("Kim's work email is kim.park@northwind.com.", "Kim's personal email is now kimpark88@gmail.com.")).toBe("another attribute: personal, not work");
  });

  it("a plan, a value still unknown, a past state", () => {
    expect(keptOf("The team uses Jenkins for CI", "The team may replace Jenkins with GitHub Actions next year")).toMatch(/^a plan, not a change/);
    expect(keptOf("The user works at Finchly", "The user's employer is to be confirmed")).toBe("a plan, not a change (employer of the user)");
    expect(assess("The user worked at Corvid Analytics from 2022 to 2025", "The user works at Tessellate Health")?.kind).not.toBe("update");
  });

  it("an addition that opens the sentence, and a past perfect", () => {
    expect(detectContradiction("Tailspin Toys bought 50 licenses of the core product.", "On top of that, Tailspin Toys bought 20 licenses of the reporting add-on.", 0.79)).toBeNull();
    expect(detectContradiction("The repo pins TypeScript 5.6.", "Before January's upgrade, the repo had been on TypeScript 5.2.", 0.75)).toBeNull();
  });

  it("two reports of one kind of event, and two numbered things", () => {
    expect(detectContradiction("The user cancelled a dinner reservation at Nopa", "The user cancelled a dinner reservation at Zuni", 0.9)).toBeNull();
    expect(detectContradiction("The API v2 endpoint is deprecated", "The API v3 endpoint is deprecated", 0.99)).toBeNull();
    expect(detectContradiction("The user quit smoking in 2019", "The user quit smoking five years ago", 0.88)).toBeNull();
  });
});

describe("the taxonomy: one attribute however it is phrased", () => {
  const attributeOf = (text: string) => readText(text).frames[0]?.attribute?.id ?? null;

  it.each([
    ["residence", ["Sam lives in Oslo", "Sam moved to Oslo", "Sam relocated to Oslo", "Sam is based in Oslo"]],
    ["manager", ["Sam's manager is Dana", "Sam reports to Dana", "Dana manages the data team", "Sam is managed by Dana"]],
    ["employer", ["Sam works at Finchly", "Sam joined Finchly", "Sam works for Finchly"]],
    ["editor", ["Sam switched to Neovim", "Sam's editor is Emacs", "Sam writes code in VS Code"]],
    ["database", ["Lumen stores its data in Firebase", "Lumen migrated to Supabase"]],
    ["region", ["Harbor runs in us-east-1", "Harbor was migrated to eu-west-1"]],
    ["timezone", ["Sam is on Central European Time"]],
    ["diet", ["Sam is vegetarian"]],
  ])("%s", (id, texts) => {
    for (const text of texts) expect([text, attributeOf(text)]).toEqual([text, id]);
  });

  it("reads a token the tagger splits as one word, and a clause that goes on with the previous subject", () => {
    expect(wordsOf("Harbor's release is v2.14.3 in us-east-1").map((w) => w.text)).toEqual(["Harbor", "'s", "release", "is", "v2.14.3", "in", "us-east-1"]);
    expect(wordsOf("Sam lives in Berlin.").at(-1)).toMatchObject({ text: "Berlin", punctuation: true });
    const frames = readText("The user quit caffeine in July 2026 and now drinks rooibos tea").frames;
    expect(frames.map((f) => [f.entity, f.attribute?.id ?? null, f.value])).toEqual([
      ["user", null, ["caffeine"]],
      ["user", "drink", ["rooibos", "tea"]],
    ]);
  });

  it("reads nothing from a question or a long text", () => {
    expect(readText("Does the user live in Berlin?")).toEqual({ frames: [], gist: null });
    expect(readText(Array.from({ length: 50 }, () => "word").join(" ")).frames).toEqual([]);
  });
});

describe("facts and questions, for recall", () => {
  it("a memory's facts and the attributes a question asks about meet", () => {
    expect(factsOf("The user joined Tessellate Health as a staff data engineer")).toEqual([
      { entity: "user", attribute: "employer", single: true },
      { entity: "user", attribute: "role", single: true },
    ]);
    expect(factsOf("Since January 2026 the user eats fish again but still no meat (pescatarian)")).toContainEqual({ entity: "user", attribute: "diet", single: true });
    const where = queryAttributes("where does the user live now?");
    expect([...where.attributes]).toEqual(["residence"]);
    expect(asksAbout(where, { entity: "user", attribute: "residence", single: true })).toBe(true);
    expect(asksAbout(where, { entity: "user sister", attribute: "residence", single: true })).toBe(false);
    const phone = queryAttributes("what's Adaeze's phone number?");
    expect(phone.attributes.has("phone")).toBe(true);
    expect(asksAbout(phone, { entity: "user", attribute: "phone", single: true })).toBe(false);
  });
});

describe("the natural dev pairs", () => {
  // ../shared/data/agent-memory/updates.json is read by bench/contradictions.ts; this guard uses the
  // committed dev set of natural pairs, at cosine 0 (the rules that need no model).
  const rows = readFileSync(new URL("../../bench/data/updates-dev.jsonl", import.meta.url), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { older: string; newer: string; contradiction: boolean });

  it("flag updates at precision >= 0.85", () => {
    const flagged = rows.filter((r) => detectContradiction(r.older, r.newer) !== null);
    expect(flagged.length).toBeGreaterThanOrEqual(8);
    expect(flagged.filter((r) => r.contradiction).length / flagged.length).toBeGreaterThanOrEqual(0.85);
  });
});
