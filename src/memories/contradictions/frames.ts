import { gistOf, isAddition, isTentative, relationWords, type Gist } from "./gist.js";
import { wordsOf, type Word } from "./nlp.js";
import { typedValuesOf } from "./typed-values.js";
import {
  additionPhrases,
  attribute,
  changePhrases,
  changeTimeWords,
  changeWords,
  groupWords,
  knownVerbs,
  leaderVerbs,
  nounAttributes,
  personSubjects,
  removalVerbs,
  setterVerbs,
  valueClasses,
  valueAttributes,
  valueStops,
  verbAttributes,
  weekdayNames,
  type Attribute,
  type AttributeId,
} from "./taxonomy.js";

// A statement read as what it says: who or what it is about (entity), which attribute, which value, and
// the markers around them (a change, an addition, a plan, a time, a negation). One frame per clause.
// Pure: the same text always gives the same frames.

export type ValueKind = "number" | "time" | "name" | "word" | "none";

export interface Frame {
  /** Normalised key of what the clause is about: "user", "alex", "api rate limit", "payments team". */
  entity: string;
  /** As written, for reasons. */
  entityText: string;
  /** From the taxonomy; null when the predicate names none (see `predicate`). */
  attribute: Attribute | null;
  /** The predicate's key ("verb:prefer", "be", "noun:favourite colour"), for attributes outside the taxonomy. */
  predicate: string;
  /** The predicate sets a value without naming the attribute ("switched to", "was raised to"). */
  setter: boolean;
  /** Normalised value tokens. */
  value: string[];
  valueText: string;
  valueKind: ValueKind;
  /** The old value a change names ("from Fridays to Tuesdays", "replaced Jenkins with …", "took over from Priya"). */
  old: string[] | null;
  oldText: string;
  /** The value is what is gone ("sold the Golf", "quit coffee", "turned off email alerts"). */
  removes: boolean;
  /** "for <scope>": the value holds for that only ("prefers Python for data scripts"); normalised. */
  scope: string;
  /** The scope as written, for reasons. */
  scopeText: string;
  /** The part of the day a habit holds at ("every morning", "in the afternoon"), or "". */
  when: string;
  /** What "as …" adds ("joined Tessellate as a staff engineer": "staff engineer"), or "". */
  qualifier: string;
  negative: boolean;
  /** The change marker as written ("moved", "now", "switched"), or null. */
  change: string | null;
  /** The addition marker as written ("also", "another"), or null. */
  addition: string | null;
  /** Reports a past state that need not hold now ("worked at X from 2022 to 2025", "used to"). */
  past: boolean;
  /** A plan or a possibility, not a change ("may replace", "is evaluating"). */
  tentative: boolean;
}

const copula = "be";
const possessive = (w: Word) => w.lower === "'s" || w.lower === "’s" || w.lower === "'";
const determiners = new Set(["the", "a", "an", "this", "that", "these", "those", "our", "my", "his", "her", "their", "your", "its", "some", "any"]);
const negationWords = new Set(["not", "n't", "never", "no", "nobody", "none", "nothing", "neither", "nor", "without"]);
const fillers = new Set(["now", "still", "just", "currently", "also", "too", "again", "anymore", "nowadays", "instead", "already", "actually", "really", "there", "then", "finally", "officially", "recently"]);
const particles = new Set(["to", "in", "at", "for", "from", "over", "with", "on", "as", "by", "off", "into", "onto", "under", "back", "up", "out"]);
/** Texts longer than this are documents or conversation, not statements: no frames. */
const maxFramesWords = 40;
const maxReadChars = 400;
const partsOfDay = new Set(["morning", "afternoon", "evening", "night", "noon", "midday", "lunchtime", "weekday", "weekend"]);
const whenOf = (words: Word[]) => words.filter((w) => partsOfDay.has(w.lemma)).map((w) => w.lemma).join(" ");
const personalPronouns = new Set(["i", "we", "she", "he"]);
const monthNames = new Set(["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]);
const possessivePronouns = new Set(["his", "her"]);
const unknownValues = new Set(["tbd", "tba", "unknown", "undecided", "unconfirmed"]);
/** Leader verbs that say so only of a group: "runs the data team", not "runs Ubuntu". */
const looseLeaderVerbs = new Set(["run", "manage", "own"]);

export interface Reading {
  /** One per clause that has a subject and a predicate. */
  frames: Frame[];
  gist: Gist | null;
}

/** What a text says, or nothing for long, empty or asking text (a document, a conversation, a question). */
export function readText(text: string): Reading {
  // Checked before tagging, so a long memory costs nothing here (40 words are about 300 characters).
  if (text.length > maxReadChars) return { frames: [], gist: null };
  // A question and its answer ("When is the demo now? Tuesday at 11.") is a note of the answer: its gist
  // counts, its frames (a question has none) do not. A bare question states nothing.
  const asks = text.indexOf("?");
  if (asks >= 0 && text.slice(asks + 1).trim() === "") return { frames: [], gist: null };
  const words = wordsOf(text);
  if (words.length === 0 || words.length > maxFramesWords) return { frames: [], gist: null };
  const framed = asks >= 0 ? [] : framesOf(labelNote(text) ?? leadingTimeDropped(words));
  return { frames: framed, gist: gistOf(words, text) };
}

/** The most words of a note's label and of its value ("Language of the ingestion service: Python."). */
const maxLabelWords = 6;
const maxNoteValueWords = 8;

/**
 * A note written "<label>: <value>" read as "<label> is <value>": the label a noun phrase (a noun of its
 * own, not only names: "Jolene: …" is a speaker), the value without a verb. Null for any other text.
 */
function labelNote(text: string): Word[] | null {
  const colon = text.indexOf(": ");
  // An arrow note ("Ahmed → Bea") names its old value: named-change.ts reads it.
  if (colon < 0 || /[!?]|→|->|=>|\(was /.test(text)) return null;
  // Counted by spaces before tagging, so a line of conversation ("Jolene: …") costs nothing more.
  const spaced = (s: string) => s.trim().split(/\s+/).length;
  if (spaced(text.slice(0, colon)) > maxLabelWords || spaced(text.slice(colon + 2)) > maxNoteValueWords) return null;
  const label = wordsOf(text.slice(0, colon));
  const value = wordsOf(text.slice(colon + 2));
  if (label.length === 0 || label.length > maxLabelWords || value.length === 0 || value.length > maxNoteValueWords) return null;
  if (value.some((w) => w.pos === "VERB" || w.pos === "AUX") || label.some((w) => w.pos === "AUX" || w.pos === "PRON")) return null;
  if (!label.some((w) => w.pos === "NOUN" || (w.pos === "VERB" && w.lower === w.lemma))) return null;
  // The label is a noun phrase: "Contact address for Jonah" ("address" is no verb here).
  for (const w of label) if (w.pos === "VERB") w.pos = "NOUN";
  label[label.length - 1]!.punctuation = false;
  return [...label, { text: "is", lower: "is", lemma: "be", pos: "AUX", entity: "", punctuation: false }, ...value];
}

/** Leading words that say since when ("Since the Q3 review, …", "As of Monday, …", "Effective immediately, …"). */
const leadingTimeWords = new Set(["since", "as", "starting", "effective", "from", "beginning", "after", "following"]);

/** The words without a leading time phrase that ends at a comma, within the first eight words. */
function leadingTimeDropped(words: Word[]): Word[] {
  if (!leadingTimeWords.has(words[0]?.lower ?? "")) return words;
  const comma = words.findIndex((w, i) => i < 8 && w.punctuation);
  return comma > 0 && comma < words.length - 2 ? words.slice(comma + 1) : words;
}

function framesOf(words: Word[]): Frame[] {
  recoverVerbs(words);
  const frames: Frame[] = [];
  let previous: Frame | null = null;
  for (const clause of clausesOf(words)) {
    const frame = clauseFrame(clause, previous);
    if (frame) frames.push(frame);
    previous = frame ?? previous;
  }
  return frames;
}

/** Splits at ";", at "," or "and" before a new subject or verb, and at "but". */
function clausesOf(words: Word[]): Word[][] {
  const clauses: Word[][] = [[]];
  words.forEach((w, i) => {
    const current = clauses[clauses.length - 1]!;
    const next = words[i + 1];
    const startsClause =
      current.length > 0 &&
      (w.lower === "but" || w.lower === "while" || w.lower === "whereas" ||
        ((w.lower === "and" || words[i - 1]?.punctuation) && next !== undefined && startsPredicate(w.lower === "and" ? words.slice(i + 1) : words.slice(i))));
    if (startsClause) clauses.push([]);
    if (!(startsClause && (w.pos === "CCONJ" || w.pos === "SCONJ"))) clauses[clauses.length - 1]!.push(w);
  });
  // A clause without a verb ("On top of that, …", "Since the review, …") belongs to the next one.
  const merged: Word[][] = [];
  for (const clause of clauses.filter((c) => c.length > 0)) {
    const last = merged[merged.length - 1];
    if (last && !last.some((w) => w.pos === "VERB" || w.pos === "AUX")) last.push(...clause);
    else merged.push(clause);
  }
  return merged;
}

/** Whether words begin a clause of their own: a subject and a verb, or a verb (its subject the previous clause's). */
function startsPredicate(words: Word[]): boolean {
  let i = 0;
  while (i < words.length && (fillers.has(words[i]!.lower) || words[i]!.pos === "ADV")) i++;
  const first = words[i];
  if (!first) return false;
  if (first.pos === "VERB" || first.pos === "AUX") return true;
  // A short subject then a verb: "Priya leads …", "the Leith lease was …".
  for (let k = i; k < Math.min(words.length, i + 5); k++) {
    const w = words[k]!;
    if (w.pos === "VERB" || w.pos === "AUX") return k > i;
    if (!["DET", "NOUN", "PROPN", "PRON", "ADJ", "PART", "NUM", "ADV"].includes(w.pos)) return false;
  }
  return false;
}

interface Markers {
  change: string | null;
  addition: string | null;
  tentative: boolean;
  negative: boolean;
}

function markersOf(words: Word[]): Markers {
  const lowerText = ` ${words.map((w) => w.lower).join(" ")} `;
  let change: string | null = changePhrases.find((p) => lowerText.includes(` ${p} `)) ?? null;
  let addition: string | null = additionPhrases.find((p) => lowerText.includes(` ${p} `)) ?? null;
  let tentative = false;
  let negative = false;
  words.forEach((w, i) => {
    if (negationWords.has(w.lower)) negative = !negative;
    if (!change && changeWords.has(w.lower)) change = w.text;
    if (!change && (w.pos === "VERB" || w.pos === "AUX") && (setterVerbs.has(w.lemma) || removalVerbs.has(w.lemma) || (w.lemma === "take" && words[i + 1]?.lower === "over"))) change = w.text;
    if (!addition && isAddition(w, words[i + 1])) addition = w.text;
    if (isTentative(w)) tentative = true;
  });
  if (lowerText.includes(" no longer ")) negative = !negative;
  return { change, addition, tentative, negative };
}

/** Drops time phrases that say when something changed ("last month", "in October 2026", "since Monday"). */
function withoutChangeTimes(words: Word[]): Word[] {
  const out: Word[] = [];
  for (let i = 0; i < words.length; ) {
    const w = words[i]!;
    if (w.entity === "DATE" || w.entity === "DURATION" || w.entity === "TIME" || (w.lower === "since" && words[i + 1]?.entity)) {
      let end = i;
      while (end < words.length && (words[end]!.entity === w.entity || end === i)) end++;
      const span = words.slice(i, end);
      const lowers = span.map((s) => s.lower);
      const isChangeTime =
        lowers.some((l) => changeTimeWords.has(l) || /^(19|20)\d\d$/.test(l)) && !lowers.some((l) => weekdayNames.has(l.replace(/s$/, "")));
      // "29 euros a year", "twice a week": a rate, part of the value.
      const rate = ["a", "an", "per", "every", "each"].includes(words[i - 1]?.lower ?? "") || ["a", "an", "per", "every", "each"].includes(w.lower);
      if (isChangeTime && !rate) {
        if (out.length > 0 && ["in", "since", "from", "as", "of", "on", "during"].includes(out[out.length - 1]!.lower)) out.pop();
        if (out.length > 0 && out[out.length - 1]!.lower === "as") out.pop();
        i = end;
        continue;
      }
    }
    if (w.lower === "ago") {
      i++;
      continue;
    }
    out.push(w);
    i++;
  }
  return out;
}

function clauseFrame(raw: Word[], previous: Frame | null): Frame | null {
  const markers = markersOf(raw);
  const timed = withoutChangeTimes(raw);
  // A date that is the value itself ("the close date is June 15", "expires on May 1") is kept.
  const frame = framed(timed, markers, previous);
  if (frame || timed.length === raw.length) return frame;
  const dated = framed(raw, markers, previous);
  return dated && !dated.past ? dated : null;
}

function framed(words: Word[], markers: Markers, previous: Frame | null): Frame | null {
  if (words.length < 2) return null;
  const verbAt = predicateIndex(words, previous !== null);
  if (verbAt < 0) return null;
  let subject = words.slice(0, verbAt).filter((w) => !fillers.has(w.lower) && w.pos !== "ADV" && !negationWords.has(w.lower));
  let entityWords: Word[] = subject;
  let possessed: Word[] = [];
  // Read the predicate: auxiliaries, negations and fillers, then the verb or the copula.
  let i = verbAt;
  let passive = false;
  let usedTo = false;
  let verb = "";
  let verbWord: Word | null = null;
  let sawCopula = false;
  let sawHave = false;
  while (i < words.length) {
    const w = words[i]!;
    // "got engaged", "got pushed back to March 19": a passive with "get".
    if (w.lemma === copula || (w.lemma === "get" && words[i + 1]?.pos === "VERB" && isPast(words[i + 1]!))) {
      sawCopula = true;
      i++;
      continue;
    }
    if (w.pos === "AUX" || negationWords.has(w.lower) || fillers.has(w.lower) || (w.pos === "ADV" && i < words.length - 1 && words[i + 1]!.pos !== "ADP")) {
      if (w.lemma === "have") sawHave = true;
      i++;
      continue;
    }
    if (w.lower === "used" && words[i + 1]?.lower === "to") {
      usedTo = true;
      i += 2;
      continue;
    }
    if (w.pos === "VERB" || (i === verbAt && w.pos !== "ADJ" && w.pos !== "ADP" && w.pos !== "DET")) {
      verb = w.lemma;
      verbWord = w;
      passive = sawCopula;
      i++;
    }
    break;
  }
  if (!verb && !sawCopula) return null;
  // "X's N is V": N is an attribute of X ("the user's sister's address": of the user's sister). Before a
  // verb the whole phrase is the subject ("the user's sister lives in …").
  // A verb that only sets a value names no attribute: the possessed noun does ("Jonah's email changed to
  // …", "Arjun's appointment got pushed back to …"); not for a person who moves ("Sam's manager moved to …").
  const personPossessed = subject.some((w) => relationWords.has(w.lemma) || ["manager", "boss", "lead", "partner"].includes(w.lemma));
  const setsPossessed = verb !== "" && (setterVerbs.has(verb) || verb === "push") && !(personPossessed && (verb === "move" || verb === "relocate" || verb === "transfer"));
  const mark = verb && !setsPossessed ? -1 : subject.findLastIndex(possessive);
  // "the language of the ingestion service", "the rate limit for the API": of what the noun is said.
  const of = mark > 0 || (verb && !setsPossessed) ? -1 : subject.findIndex((w, k) => k > 0 && (w.lower === "of" || w.lower === "for") && (subject[k - 1]!.pos === "NOUN" || subject[k - 1]!.pos === "PROPN"));
  if (mark > 0) {
    entityWords = subject.slice(0, mark);
    possessed = subject.slice(mark + 1);
  } else if (of > 0 && of < subject.length - 1 && nounAttribute(subject.slice(0, of))) {
    entityWords = subject.slice(of + 1);
    possessed = subject.slice(0, of);
  } else if (previous && possessivePronouns.has(subject[0]?.lower ?? "") && subject.length > 1 && (!verb || setsPossessed)) {
    // "Sam pulled out of the Berlin Half; his target race is now …": the previous clause's subject's.
    entityWords = [];
    possessed = subject.slice(1);
  }
  // Phrasal verbs and prepositions: "took over", "reports to", "moved back to", "is based in".
  let prep = "";
  while (i < words.length && particles.has(words[i]!.lower) && (words[i]!.pos === "ADP" || words[i]!.pos === "PART" || words[i]!.pos === "ADV")) {
    prep = prep ? `${prep} ${words[i]!.lower}` : words[i]!.lower;
    i++;
    if (prep === "from" || prep.endsWith(" from")) break;
  }
  const rest = words.slice(i);
  // "is to be confirmed", "is TBD": a value still unknown is no value.
  const unknownValue = (prep === "to" && !verb) || rest.some((w) => unknownValues.has(w.lower));
  const { value, old, qualifier, scope } = splitValue(prep, rest, verb);
  if (subject.length === 0) {
    // "… and now lives there": the previous clause's subject. An imperative has none: nothing to compare.
    if (!previous) return null;
    entityWords = [];
    subject = [];
  }
  const person = (ws: Word[]) =>
    ws.length > 0 && (ws.every((w) => w.pos === "PROPN") || ws.some((w) => personSubjects.has(w.lemma) || personSubjects.has(w.lower)));
  // "it", "that", "you": what they point at is not in the text.
  if (entityWords.length > 0 && entityWords.every((w) => w.pos === "PRON" && !personalPronouns.has(w.lower))) return null;
  let entity = entityWords.length > 0 ? key(entityWords) : previous?.entity ?? "";
  let entityText = entityWords.length > 0 ? asWritten(entityWords) : previous?.entityText ?? "";
  const isPerson = entityWords.length > 0 ? person(entityWords) : (previous !== null && personSubjects.has(previous.entity)) || /^[a-z]+( [a-z]+)?$/.test(entity);
  let valueWords = value;
  let oldWords = old;
  let attr: Attribute | null = null;
  let predicate = "";
  let setter = false;
  // "quit coffee", "gave up coffee", "turned off alerts"; not "stopped by the coffee shop".
  const removes = prep === "" || prep === "off" || prep === "up" ? removalVerbs.has(prep ? `${verb} ${prep}` : verb) : false;
  const past = usedTo || (verbWord !== null && !passive && !sawHave && !removes && isPast(verbWord) && !setterVerbs.has(verb) && !isSettling(verb));

  if (!verb) {
    // "X's N is V", "X is V".
    const noun = possessed.length > 0 ? nounAttribute(possessed) : null;
    if (possessed.length > 0) {
      attr = noun;
      predicate = `noun:${key(possessed)}`;
    } else {
      const byValue = valueWords.map((w) => valueAttributes.get(w.lower)).find((a) => a !== undefined);
      // "is on the Pro plan", "is on Premium support", "is on the platform team": the noun names it.
      const onNoun = prep === "on" ? valueWords.map((w) => nounAttributes.get(w.lemma)).find((id) => id === "plan" || id === "team") : undefined;
      if (byValue) attr = attribute(byValue);
      else if (onNoun) attr = attribute(onNoun);
      else if ((prep === "in" || prep === "at") && valueWords.some((w) => w.pos === "PROPN")) {
        const kind = kindOf(valueWords);
        attr = attribute(kind === "time" ? "schedule" : kind === "number" ? "address" : "residence");
      }
      predicate = prep ? `be ${prep}` : "be";
      // "The user is the tech lead", "Node 18 is the runtime": a role; left to the sentence rules.
      if (!prep && !byValue && rest[0] && determiners.has(rest[0].lower) && rest[0].lower !== "a" && rest[0].lower !== "an") return null;
    }
  } else if (possessed.length > 0) {
    // "Jonah's email changed to …": the attribute the possessed noun names, its value what the verb sets.
    attr = nounAttribute(possessed);
    predicate = `noun:${key(possessed)}`;
  } else if (passive && verbWord && valueAttributes.has(verbWord.lower)) {
    // "got engaged to Marco", "is now divorced": a participle that names a status of its attribute.
    attr = attribute(valueAttributes.get(verbWord.lower)!);
    predicate = "be";
    valueWords = [verbWord];
  } else {
    const phrase = prep ? `${verb} ${prep.split(" ")[0]}` : verb;
    const fullPhrase = prep ? `${verb} ${prep}` : verb;
    // "Priya leads payments", "Marco runs the data team"; not "Server 3 runs Ubuntu".
    const leads =
      (leaderVerbs.has(fullPhrase) || (leaderVerbs.has(verb) && !prep && !passive)) &&
      !entityWords.some((w) => /\d/.test(w.text)) &&
      (!looseLeaderVerbs.has(verb) || valueWords.some((w) => groupWords.has(w.lemma)));
    if (leads) {
      // "Priya leads the payments team", "Marco took over payments from Priya": the team is the entity.
      if (valueWords.length === 0) return null;
      const leader = entityWords.length > 0 ? entityWords : [];
      entity = key(valueWords);
      entityText = asWritten(valueWords);
      valueWords = leader;
      attr = attribute("manager");
      predicate = "leads";
      setter = verb === "take";
    } else if (passive && (verb === "lead" || verb === "head" || verb === "run" || verb === "manage" || verb === "own") && prep === "by") {
      attr = attribute("manager");
      predicate = "leads";
    } else {
      const known = verbAttributes.get(fullPhrase) ?? verbAttributes.get(phrase) ?? (prep ? undefined : verbAttributes.get(verb));
      if (known) attr = attribute(known);
      predicate = `verb:${phrase}`;
      if (setterVerbs.has(verb) || removes) setter = !known || known === "name";
      // A person who moves to a place (not to a team) changes residence.
      if ((verb === "move" || verb === "relocate") && isPerson && !valueWords.some((w) => groupWords.has(w.lemma)) && valueWords.some((w) => w.pos === "PROPN")) {
        attr = attribute("residence");
        setter = false;
      }
      if (verb === "move" && valueWords.some((w) => groupWords.has(w.lemma))) {
        attr = attribute("team");
        setter = false;
      }
      if (verb === "join" && valueWords.some((w) => groupWords.has(w.lemma))) attr = attribute("team");
      // "joined Tessellate Health" is an employer; "joined a gym" is not.
      else if (verb === "join" && !valueWords.some((w) => w.pos === "PROPN")) attr = null;
      // "eats meat again": a diet, against "is vegetarian".
      if (verb === "eat" && valueWords.length > 0) predicate = "verb:eat";
    }
  }
  // A value the taxonomy knows the kind of ("Neovim" is an editor, "Supabase" a database) names the
  // attribute a setter or a generic predicate leaves unnamed.
  if (!attr || setter || ["residence", "tools", "hosting", "schedule", "language"].includes(attr.id)) {
    const known = valueWords.some((w) => cloudRegion.test(w.lower)) ? "region" : valueClassOf(valueWords);
    if (known) {
      attr = attribute(known);
      setter = false;
    }
  }
  // "jonah.r@acme.io", "+44 7700 900123": a value whose form names its attribute.
  const form = typedValuesOf(valueWords.map((w) => w.text).join(" "))[0]?.form;
  if (form === "email" || form === "phone") attr = attribute(form);
  // "is on Central European Time": a time zone.
  if (!verb && !attr && valueWords.length > 0 && valueWords[valueWords.length - 1]!.lemma === "time" && valueWords.some((w) => w.pos === "PROPN")) attr = attribute("timezone");
  // "follows a vegetarian diet": a value that names its attribute.
  if (!attr) {
    const byValue = valueWords.map((w) => valueAttributes.get(w.lower)).find((a) => a !== undefined);
    if (byValue) attr = attribute(byValue);
  }
  // "switched to VS Code as their main editor", "joined Tessellate as a staff engineer".
  if (qualifier.length > 0) {
    const named = nounAttribute(qualifier);
    if (named && (setter || !attr)) {
      attr = named;
      setter = false;
    }
  }
  if (valueWords.length === 0 && !removes) return null;
  // A finite verb inside the value means the clause was misread ("the ledger deploy to the canary failed …").
  if (!unknownValue && valueWords.some((w) => w.pos === "VERB" && isPast(w) && !valueAttributes.has(w.lower))) return null;
  return {
    entity,
    entityText,
    attribute: attr,
    predicate,
    setter,
    value: valueWords.filter((w) => !partsOfDay.has(w.lemma) || valueWords.every((v) => partsOfDay.has(v.lemma) || determiners.has(v.lower))).map(tokenKey).filter((t) => t !== ""),
    valueText: valueWords.map((w) => w.text).join(" "),
    valueKind: kindOf(valueWords),
    old: oldWords ? oldWords.map(tokenKey).filter((t) => t !== "") : null,
    oldText: oldWords ? oldWords.map((w) => w.text).join(" ") : "",
    removes,
    scope: scope.map(tokenKey).filter((t) => t !== "").join(" "),
    scopeText: scope.map((w) => w.text).join(" "),
    when: whenOf(valueWords),
    qualifier: qualifier.map(tokenKey).filter((t) => t !== "").join(" "),
    negative: markers.negative,
    change: markers.change,
    addition: markers.addition,
    past,
    tentative: markers.tentative || unknownValue,
  };
}

/** The first verb or auxiliary after a subject; a verb-tagged first word is a plural subject ("Deploys moved …"). */
function predicateIndex(words: Word[], continuing: boolean): number {
  const verbal = (w: Word) => w.pos === "VERB" || w.pos === "AUX";
  let start = 0;
  while (start < words.length && (fillers.has(words[start]!.lower) || words[start]!.pos === "ADV" || negationWords.has(words[start]!.lower))) start++;
  // "… and now drinks rooibos tea": a clause that goes on with the previous one's subject.
  if (continuing && words[start] && verbal(words[start]!)) return start;
  if (start > 0 && words[start] && verbal(words[start]!)) return -1;
  const first = words.findIndex((w, i) => i > start && verbal(w));
  if (start === 0 && words[0] && verbal(words[0]) && words[0].pos === "VERB") {
    // An imperative ("Use metric units") has no subject; a plural noun read as a verb has one.
    return words[0].lower.endsWith("s") && first > 0 ? first : -1;
  }
  return first > 0 ? first : -1;
}

/**
 * A known verb the tagger read as a noun ("Alex reports to Priya", "The user lives in Berlin and …"): a
 * word in -s after the subject's noun or name, before its object, whose stem the taxonomy knows as a verb.
 * Only before the sentence has a verb of its own.
 */
function recoverVerbs(words: Word[]): void {
  for (let i = 1; i < words.length - 1; i++) {
    const w = words[i]!;
    if (w.pos === "VERB" || w.pos === "AUX") return;
    const stem = w.lower.slice(0, -1);
    const after = words[i + 1]!;
    const subjectBefore = ["NOUN", "PROPN", "X"].includes(words[i - 1]!.pos);
    const objectFollows = ["ADP", "DET", "PRON", "PROPN", "NUM", "ADJ", "NOUN"].includes(after.pos);
    if (w.pos === "NOUN" && w.lower.endsWith("s") && subjectBefore && objectFollows && (verbAttributes.has(`${stem} ${after.lower}`) || knownVerbs.has(stem))) {
      w.lemma = stem;
      w.pos = "VERB";
      return;
    }
  }
}

/** The value after the predicate, and what qualifies it: "from X to Y", "X with Y", "as <noun>", "for <scope>". */
function splitValue(prep: string, rest: Word[], verb: string): { value: Word[]; old: Word[] | null; qualifier: Word[]; scope: Word[] } {
  let value: Word[] = [];
  let old: Word[] | null = null;
  let qualifier: Word[] = [];
  let scope: Word[] = [];
  let target: "value" | "old" | "qualifier" | "scope" | "done" = prep.endsWith("from") ? "old" : "value";
  const push = (w: Word) => {
    if (target === "value") value.push(w);
    else if (target === "old") (old ??= []).push(w);
    else if (target === "qualifier") qualifier.push(w);
    else if (target === "scope") scope.push(w);
  };
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i]!;
    if (target === "done") break;
    if (target === "old" && (w.lower === "to" || w.lower === "with" || w.lower === "for")) {
      target = "value";
      continue;
    }
    if (target === "value" && (verb === "replace" || verb === "swap") && (w.lower === "with" || w.lower === "by")) {
      old = value;
      value = [];
      continue;
    }
    if (target === "value" && value.length > 0 && w.lower === "from" && (verb === "take" || setterVerbs.has(verb) || verb === "inherit")) {
      target = "old";
      continue;
    }
    if ((target === "value" || target === "old") && (value.length > 0 || target === "old") && w.lower === "as") {
      target = "qualifier";
      continue;
    }
    if (target !== "scope" && value.length > 0 && w.lower === "for" && w.pos === "ADP") {
      target = "scope";
      continue;
    }
    // A pronoun starts another clause ("… which she …"); a possessive one ("of their code") does not.
    if (value.length > 0 && (valueStops.has(w.lower) || w.pos === "SCONJ" || (w.pos === "PRON" && w.lower !== "it" && !determiners.has(w.lower)))) {
      if (target === "value" || target === "old") {
        target = "done";
        continue;
      }
    }
    if (w.punctuation && target === "value" && value.length > 0) {
      push(w);
      target = "done";
      continue;
    }
    push(w);
  }
  // "100 requests per second": "per" belongs to a rate.
  const content = (ws: Word[]) =>
    ws.filter((w) => (!determiners.has(w.lower) && !fillers.has(w.lower) && !negationWords.has(w.lower) && (w.pos !== "ADP" || w.lower === "per")) || /\d/.test(w.text));
  // "… and now lives there": a value that only points back is no value.
  return { value: content(value).filter((w) => w.lower !== "there" && w.lower !== "it"), old: old ? content(old) : null, qualifier: content(qualifier), scope: content(scope) };
}

/** A cloud region: "us-east-1", "eu-west-2", "europe-west1", "ap-southeast-2". */
const cloudRegion = /^(us|eu|ap|sa|ca|me|af|europe|asia|australia|northamerica|southamerica)-[a-z]+-?\d$/;

/** The attribute a known value belongs to ("neovim" → editor, "github actions" → ci). */
function valueClassOf(words: Word[]): AttributeId | null {
  const lowers = words.map((w) => w.lower);
  for (let n = 2; n >= 1; n--) {
    for (let s = 0; s + n <= lowers.length; s++) {
      const id = valueClasses.get(lowers.slice(s, s + n).join(" "));
      if (id) return id;
    }
  }
  return null;
}

/**
 * The attribute a noun phrase names, by its head ("home address", "work laptop"): a word before the head
 * only modifies it ("home router" is no residence), unless it says which of a kind ("favourite band").
 */
function nounAttribute(words: Word[]): Attribute | null {
  const lemmas = words.filter((w) => !determiners.has(w.lower) && w.pos !== "PRON").map((w) => w.lemma);
  for (let n = Math.min(3, lemmas.length); n >= 1; n--) {
    const id = nounAttributes.get(lemmas.slice(lemmas.length - n).join(" "));
    if (id) return attribute(id);
  }
  const picked = lemmas.find((l) => pickingWords.has(l));
  return picked ? attribute(nounAttributes.get(picked)!) : null;
}

/** Words before a head noun that pick one of its kind: "favourite band" is a preference. */
const pickingWords = new Set(["favourite", "favorite"]);

/** Words as written, a leading determiner in lower case ("the user", not "The user", inside a reason). */
const asWritten = (words: Word[]): string =>
  words.map((w, i) => (i === 0 && determiners.has(w.lower) ? w.lower : w.text)).join(" ").replace(/ (['’]s?)(?= |$)/g, "$1");

const tokenKey = (w: Word): string => {
  const t = w.pos === "PROPN" || w.pos === "NUM" || /\d/.test(w.text) ? w.lower : w.lemma;
  return t.replace(/^[^\p{L}\p{N}+@#]+|[^\p{L}\p{N}]+$/gu, "");
};

const key = (words: Word[]): string =>
  words
    .filter((w) => !determiners.has(w.lower) && !possessive(w) && w.pos !== "PRON")
    .map(tokenKey)
    .filter((t) => t !== "")
    .join(" ") || words.map(tokenKey).join(" ");

function kindOf(words: Word[]): ValueKind {
  if (words.length === 0) return "none";
  if (words.some((w) => w.entity === "TIME" || weekdayNames.has(w.lemma.replace(/s$/, "")) || (w.entity === "DATE" && monthNames.has(w.lower)))) return "time";
  if (words.some((w) => w.pos === "NUM" || /\d/.test(w.text))) return "number";
  if (words.some((w) => w.pos === "PROPN")) return "name";
  return "word";
}

/** A past form: not its lemma, nor a present ("lives") or a gerund ("living"). */
function isPast(w: Word): boolean {
  return w.lower !== w.lemma && !w.lower.endsWith("s") && !w.lower.endsWith("ing");
}

/** Events that settle a lasting state: "joined X", "married Y", "became Z" say what holds now. */
function isSettling(verb: string): boolean {
  return ["join", "marry", "become", "start", "adopt", "buy", "get", "hire", "promote", "appoint", "elect", "name", "take", "base", "locate", "rename"].includes(verb);
}
