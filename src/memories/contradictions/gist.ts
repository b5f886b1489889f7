import { namedChangeOf, valueKeys, type NamedChange } from "./named-change.js";
import type { Word } from "./nlp.js";
import { typedValuesOf, type TypedValue } from "./typed-values.js";
import { additionPhrases, additionWords, attribute, changePhrases, changeVerbs, changeWords, tentativeLemmas, tentativeWords, valueClasses, type AttributeId } from "./taxonomy.js";

// What a statement is about and whether it announces a change, for updates whose attribute no frame
// names: "Billing service CI migrated from Jenkins to GitHub Actions" after "Builds for the billing
// service run on Jenkins". The topic is the statement's names and nouns; the guards are what makes a
// look-alike (another relative or environment, an addition, a plan, a past state).

export interface Gist {
  /** Lemmas of its names, nouns and identifiers, less generic ones ("user", "team", "week"). */
  topic: Set<string>;
  /** The topic words of its subject (before its first verb). */
  subject: Set<string>;
  /** The topic words that are names without digits (people, products, places). */
  names: Set<string>;
  /** The last noun of its subject ("alert" of "Harbor on-call alerts"), or null. */
  head: string | null;
  /** The topic words near its change: the subject and what follows the change verb ("dropped iTerm2"). */
  changed: Set<string>;
  /** The lemma of the change verb, or the marker. */
  changeKey: string | null;
  /**
   * It reads as a line of conversation, not a note: it speaks as "I" to "you", or exclaims. A change
   * told in conversation ("I won't quit!") is no statement of what holds.
   */
  conversational: boolean;
  /** When it says the change happened, as year × 12 + month ("in November 2019"), or null. */
  dated: number | null;
  /** Nouns it calls new ("has a new mobile number"): a change of them. */
  renewed: Set<string>;
  /** Identifiers with digits ("v2", "PLAT-2231"): two different ones name two things. */
  identifiers: Set<string>;
  /** The change it announces, as written ("migrated", "no longer", "from now on"), or null. */
  change: string | null;
  /** "also", "another", "as well": it adds. */
  addition: boolean;
  /** "may", "is considering", "plans to": not a change yet. */
  tentative: boolean;
  /** "used to", "previously", "worked … until 2022": what was, not what changed. */
  past: boolean;
  /** Relatives and other people it speaks of ("sister", "colleague"): another subject than the user. */
  relations: Set<string>;
  /** Qualifiers that pick one of several alike attributes ("work" / "personal" email, "staging" / "production"). */
  qualifiers: Set<string>;
  /** The old and new values it writes around a change marker ("Wed 4:30 → Thu 5:00", "instead of Dev"). */
  named: NamedChange | null;
  /** Its words as value keys (see named-change.ts), to find an old value another statement names. */
  keys: Set<string>;
  /** Values whose kind is common knowledge ("AWS" a cloud, "Neovim" an editor), and whether a change leads to them. */
  classed: ClassedValue[];
  /** Amounts by unit ("90 days", "250 requests"): unit lemma → the number as written, lower case. */
  quantities: Map<string, string>;
  /** Emails, phone numbers, street and web addresses it gives (see typed-values.ts). */
  values: TypedValue[];
}

/** Particles that make a verb a change: "went up", "took over", "gave up", "handed over", "turned off". */
const changeParticles = new Map([["go", ["up", "down", "back"]], ["take", ["over"]], ["give", ["up"]], ["hand", ["over"]], ["turn", ["off", "on"]], ["phase", ["out"]], ["pass", ["to"]]]);
const particleVerbs = new Set(changeParticles.keys());
/** Particles after which a change verb is no change: "stopped by the coffee shop". */
const notChangeParticles = new Map([["stop", ["by", "at", "in", "for"]], ["drop", ["by", "in", "off"]], ["turn", ["to", "into", "up"]]]);
const pastWords = new Set(["previously", "formerly", "once", "originally", "until"]);

export const genericTopics = new Set([
  "user", "team", "company", "people", "person", "everyone", "everything", "thing", "work", "day", "week", "month", "year",
  "time", "today", "morning", "afternoon", "evening", "night", "weekend", "start", "end", "way", "one", "lot", "part", "new",
  "old", "current", "all", "rest", "spring", "summer", "autumn", "winter", "q1", "q2", "q3", "q4",
  "gb", "mb", "kb", "tb", "ms", "second", "minute", "hour", "percent", "%", "$", "euro", "dollar", "usd", "eur",
]);
/** One qualifier written two ways. */
const qualifierSynonyms = new Map([["prod", "production"], ["dev", "development"], ["annually", "annual"], ["yearly", "annual"], ["dr", "disaster-recovery"]]);
export const relationWords = new Set([
  "sister", "brother", "mother", "father", "mom", "mum", "dad", "parent", "son", "daughter", "child", "kid", "wife", "husband",
  "partner", "girlfriend", "boyfriend", "cousin", "aunt", "uncle", "grandmother", "grandfather", "friend", "colleague",
  "coworker", "neighbour", "neighbor", "roommate", "flatmate", "cofounder", "niece", "nephew", "sibling", "spouse", "fiance", "fiancee",
]);
/** Groups of qualifiers: two statements qualified from one group differently are about two attributes. */
const qualifierGroups = [
  ["work", "personal", "home", "private", "business", "office"],
  ["staging", "production", "prod", "dev", "development", "test", "testing", "qa", "sandbox", "preview"],
  ["read", "write"],
  ["monthly", "yearly", "annual", "annually", "weekly", "daily"],
  ["primary", "secondary", "backup", "replica", "standby", "disaster-recovery", "dr", "failover"],
  ["ios", "android", "web", "desktop", "mobile"],
  ["frontend", "backend"],
  ["internal", "external", "public", "private"],
];
const qualifierGroup = new Map(qualifierGroups.flatMap((g, i) => g.map((w) => [w, i] as const)));

const conversationWords = new Set(["i", "you", "me", "my", "your", "yours", "mine", "i'm", "you're"]);

/** `text` is the words' text: a leading "Name:" is who speaks, not what it is about. */
export function gistOf(words: readonly Word[], text: string): Gist {
  const speaker = /^\p{Lu}\p{L}+(?: \p{Lu}\p{L}+)?:\s/u.exec(text);
  const speakerWords = speaker ? speaker[0].split(/\s+/).filter((w) => w !== "").length : 0;
  const conversational = text.includes("!") || words.some((w) => conversationWords.has(w.lower));
  const lowerText = ` ${words.map((w) => w.lower).join(" ")} `;
  const topic = new Set<string>();
  const subject = new Set<string>();
  const names = new Set<string>();
  const changed = new Set<string>();
  const identifiers = new Set<string>();
  const relations = new Set<string>();
  const qualifiers = new Set<string>();
  const renewed = new Set<string>();
  // "Plan: Business → Enterprise", "Default branch: main (was master)": a terse note of a change.
  let change: string | null = changePhrases.find((p) => lowerText.includes(` ${p} `)) ?? (/→|->|\(was /.test(text) ? "→" : null);
  let changeKey: string | null = change;
  let changeAt = -1;
  const firstVerb = words.findIndex((w, i) => i > 0 && (w.pos === "VERB" || w.pos === "AUX"));
  // The main verb: the first verb, after its auxiliaries ("was upgraded", "has been renamed", "is now moving").
  let mainAt = firstVerb;
  while (mainAt >= 0 && mainAt + 1 < words.length && ["AUX", "ADV", "PART"].includes(words[mainAt]!.pos) && words[mainAt + 1]!.pos !== "ADP") mainAt++;
  let tentative = false;
  // "used to", "had been on TypeScript 5.2", "Before January's upgrade, …".
  let past = lowerText.includes(" used to ") || lowerText.includes(" had been ") || words[0]?.lower === "before";
  words.forEach((w, i) => {
    const next = words[i + 1];
    const identifier = /\d/.test(w.text) && /\p{L}/u.test(w.text);
    if (i >= speakerWords && (w.pos === "PROPN" || w.pos === "NOUN" || identifier)) {
      // A capitalised first word is tagged a name: "Sprints are …" is "sprint".
      const t = identifier ? w.lower : i === 0 && w.pos === "PROPN" && w.lower.length > 4 && w.lower.endsWith("s") ? w.lower.slice(0, -1) : w.lemma;
      if (!genericTopics.has(t) && t.length > 1) {
        topic.add(t);
        if (w.pos === "PROPN" && !identifier) names.add(t);
        if (i < firstVerb) subject.add(t);
        if (identifier) identifiers.add(t);
      }
    }
    if (relationWords.has(w.lemma)) relations.add(w.lemma);
    // A qualifier modifies a noun: "work email", "staging cluster"; not "works out of the office".
    const modifies = next !== undefined && (next.pos === "NOUN" || next.pos === "PROPN") && w.pos !== "VERB" && w.pos !== "AUX";
    const qualifier = !modifies ? null : qualifierGroup.has(w.lower) ? w.lower : qualifierGroup.has(w.lemma) ? w.lemma : null;
    if (qualifier) qualifiers.add(qualifierSynonyms.get(qualifier) ?? qualifier);
    // Only the main verb announces a change: not an imperative ("migrate the dashboards"), a gerund
    // ("Raising the timeout hides …") or a verb of a later clause ("… when the schema changed").
    const mainVerb = i === mainAt || (firstVerb < 0 && w.pos === "NOUN" && i > 0 && next?.pos === "ADP");
    // "PROJ-1300: migrate …" is a label, then an imperative.
    // A note that starts with a past form reports a change without a subject ("Bumped openapi-generator
    // to 7.2"); a base form is a to-do ("Migrate the dashboards").
    const reported = i === 0 && w.pos === "VERB" && w.lower !== w.lemma && w.lower.endsWith("ed");
    if (!change && (reported || (mainVerb && subjectBefore(words, i) && !words[i - 1]?.punctuation))) {
      const particle = changeParticles.get(w.lemma);
      const isChange = particleVerbs.has(w.lemma) ? particle?.includes(next?.lower ?? "") : changeVerbs.has(w.lemma) && !notChangeParticles.get(w.lemma)?.includes(next?.lower ?? "");
      if (isChange) {
        change = w.text;
        changeKey = w.lemma;
        changeAt = i;
      }
    }
    if (!change && changeWords.has(w.lower)) change = changeKey = w.text.toLowerCase();
    if (isTentative(w)) tentative = true;
    // "has a new mobile number", "Sam's new address is …": a new value of what follows; not a to-do's
    // "update the README with the new region".
    if (w.lower === "new" && (next?.pos === "NOUN" || next?.pos === "ADJ") && holdsNew(words, i)) {
      for (const after of words.slice(i + 1, i + 4)) if (after.pos === "NOUN") renewed.add(after.lemma);
    }
    if (pastWords.has(w.lower)) past = true;
  });
  const addition = additionPhrases.some((p) => lowerText.includes(` ${p} `)) || words.some((w, i) => isAddition(w, words[i + 1]));
  // What the change verb acts on: the subject and the next few words ("dropped iTerm2", "moved off Jira").
  for (const t of subject) changed.add(t);
  if (changeAt >= 0) {
    for (const w of words.slice(changeAt + 1, changeAt + 5)) {
      const t = /\d/.test(w.text) ? w.lower : w.lemma;
      if (topic.has(t)) changed.add(t);
    }
  } else for (const t of topic) changed.add(t);
  const subjectNouns = words.slice(speakerWords, Math.max(speakerWords, firstVerb)).filter((w) => w.pos === "NOUN" || w.pos === "PROPN");
  const head = subjectNouns.length > 0 ? subjectNouns[subjectNouns.length - 1]!.lemma : null;
  const named = namedChangeOf(text, words);
  return { topic, subject, names, head, dated: datedOf(words), conversational, renewed, changed, changeKey, identifiers, change, addition, tentative, past, relations, qualifiers, named, keys: valueKeys(text), values: typedValuesOf(text), quantities: quantitiesOf(words), classed: classedValuesOf(words) };
}

/** Verbs (lemmas) that say someone holds what "new" qualifies: "has", "got", "is on", "bought". */
const holdingLemmas = new Set(["have", "get", "be", "buy", "receive", "'s", "’s"]);
const newDeterminers = new Set(["a", "an", "the", "his", "her", "their", "my", "our", "its"]);

/** Whether the "new" at `at` follows a verb of holding or a possessive (past its determiner), or opens the text. */
function holdsNew(words: readonly Word[], at: number): boolean {
  let i = at - 1;
  while (i >= 0 && newDeterminers.has(words[i]!.lower)) i--;
  return i < 0 || holdingLemmas.has(words[i]!.lemma) || holdingLemmas.has(words[i]!.lower);
}

/** A word of a plan: "may", "will", "is considering"; not "is no longer considered allergic". */
export function isTentative(w: Word): boolean {
  return (w.pos === "AUX" && tentativeWords.has(w.lower)) || (w.pos === "VERB" && tentativeLemmas.has(w.lemma) && !w.lower.endsWith("ed"));
}

/** Whether a subject (a noun, a name or a pronoun) comes before word i: "Harbor was migrated", not "Migrate Harbor". */
function subjectBefore(words: readonly Word[], i: number): boolean {
  return words.slice(0, i).some((w) => w.pos === "NOUN" || w.pos === "PROPN" || w.pos === "PRON");
}

/** "also", "as well"; "another", "other", "a second" only before a noun ("his other account"); "too" not in "too many". */
export function isAddition(w: Word, next: Word | undefined): boolean {
  if (!additionWords.has(w.lower)) return false;
  if (w.lower === "too") return !["ADJ", "ADV"].includes(next?.pos ?? "");
  if (["another", "second", "other", "extra"].includes(w.lower)) return ["NOUN", "PROPN", "ADJ"].includes(next?.pos ?? "");
  return true;
}

const monthNumbers = new Map(
  ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"].map((m, i) => [m, i]),
);

/** The first year the text names, with the month before it when there is one: "in November 2019" → 2019 × 12 + 10. */
function datedOf(words: readonly Word[]): number | null {
  const at = words.findIndex((w) => /^(19|20)\d\d$/.test(w.lower));
  if (at < 0) return null;
  const month = monthNumbers.get(words[at - 1]?.lower ?? "") ?? monthNumbers.get(words[at - 2]?.lower ?? "") ?? 0;
  return Number(words[at]!.lower) * 12 + month;
}

/** Two qualifier sets that pick different attributes of one group. */
export function qualifiersClash(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const x of a) {
    for (const y of b) if (x !== y && qualifierGroup.get(x) === qualifierGroup.get(y)) return true;
  }
  return false;
}

/** Number words up to a hundred, so "ninety days" and "90 days" are one amount. */
const numberWords = new Map([
  ..."zero one two three four five six seven eight nine ten eleven twelve".split(" ").map((w, i) => [w, String(i)] as const),
  ..."twenty thirty forty fifty sixty seventy eighty ninety".split(" ").map((w, i) => [w, String(20 + 10 * i)] as const),
  ["hundred", "100"],
]);

/** "30 days", "ninety days", "250 requests": each unit's amount (a number, then a noun). */
function quantitiesOf(words: readonly Word[]): Map<string, string> {
  const out = new Map<string, string>();
  words.forEach((w, i) => {
    const unit = words[i + 1];
    if (w.pos !== "NUM" || unit?.pos !== "NOUN" || /\d/.test(unit.text)) return;
    out.set(unit.lemma, numberWords.get(w.lower) ?? w.lower.replace(/,/g, ""));
  });
  return out;
}

export interface ClassedValue {
  attribute: AttributeId;
  /** Lower case, as in the taxonomy ("google cloud"). */
  value: string;
  /** "migration to Google Cloud", "moved everything onto Hetzner": a change leads to it. */
  changedTo: boolean;
}

/** Nouns that name a change: "finished its migration to Google Cloud". */
const changeNouns = new Set(["migration", "move", "switch", "transition", "upgrade", "port", "cutover", "rewrite"]);

/** The values of single-valued classes a text names (two-word names first), each once. */
function classedValuesOf(words: readonly Word[]): ClassedValue[] {
  const out: ClassedValue[] = [];
  let changeSeen = false;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if ((w.pos === "VERB" && changeVerbs.has(w.lemma)) || changeNouns.has(w.lemma)) changeSeen = true;
    for (const n of [2, 1]) {
      const value = words.slice(i, i + n).map((x) => x.lower).join(" ");
      const id = n === 2 && i + 1 >= words.length ? undefined : valueClasses.get(value);
      if (!id || !attribute(id).single || out.some((c) => c.value === value)) continue;
      const before = words[i - 1]?.lower;
      out.push({ attribute: id, value, changedTo: changeSeen && (before === "to" || before === "onto") });
      i += n - 1;
      break;
    }
  }
  return out;
}
