import { readText, type Frame } from "./frames.js";
import type { Gist } from "./gist.js";
import {
  abbreviations,
  additiveMarkers,
  changeMarkers,
  changeVerbs,
  copulas,
  definiteDeterminers,
  irregularForms,
  irregularPasts,
  months,
  multiValuedVerbs,
  negations,
  numberWords,
  phrases,
  polarityWords,
  settlingVerbs,
  stopwords,
  synonyms,
  units,
  weekdays,
} from "./lexicon.js";

// A memory's text reduced to what the contradiction rules compare: its content tokens in order, each
// with the kind of value it is, and the sentence's polarity. Pure and deterministic.

export type TokenKind = "word" | "be" | "number" | "time" | "name" | "unit";

export interface Token {
  /** Normalised form: lower case, stemmed, synonyms folded, numbers in digits. */
  text: string;
  /** As written, for reasons. */
  original: string;
  kind: TokenKind;
  /** A value that says which thing the sentence is about ("Ticket 4411 is closed"), not a value of it. */
  labelsSubject?: true;
}

/** What a text that is not compared yields: no tokens, so no rule fires. */
export const noStatement: Statement = {
  tokens: [],
  negative: false,
  polarityWords: [],
  additive: false,
  preference: null,
  manyValued: false,
  definiteRole: false,
  changeMarked: false,
  pastEvent: false,
  replaces: null,
  clauses: [],
  frames: [],
  gist: null,
};

export interface Statement {
  /** Content tokens in order, without function words, negations and opposites. */
  tokens: Token[];
  /** An odd number of negations and negative-side opposites ("not", "never", "hates", "disabled"). */
  negative: boolean;
  /** The negations and opposites that set the polarity, as written. */
  polarityWords: string[];
  /** The statement adds to what is known ("also", "too", "as well"). */
  additive: boolean;
  /** "X over Y", "X instead of Y", "X rather than Y": [X, Y], stemmed. */
  preference: [string, string] | null;
  /** Its verb can hold many values at once ("likes", "speaks"): a new value adds rather than replaces. */
  manyValued: boolean;
  /** Its copula is followed by a definite determiner: a role one holder has ("X is the tech lead"). */
  definiteRole: boolean;
  /** It says that something is so now ("is now", "anymore"): it replaces what was. */
  changeMarked: boolean;
  /**
   * It reports something that happened (a verb in the past, no "is"/"are", no "now") and not an event
   * that settles a state: two such reports with another time or value are two occurrences.
   */
  pastEvent: boolean;
  /** "switched from X to Y": the normalised tokens of X, which this statement replaces. */
  replaces: string[] | null;
  /** Its clauses (split at ",", ";" and "and"), when it has two to four; otherwise empty. */
  clauses: Statement[];
  /** What each clause says of what (see frames.ts); empty for clauses and long texts. */
  frames: Frame[];
  /** Its topic and markers (see gist.ts); null for clauses and long texts. */
  gist: Gist | null;
}

/** A light suffix stripper: enough to make "lives", "lived" and "living" one word. */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith("ies")) w = w.slice(0, -3) + "y";
  else if (w.length > 3 && w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us")) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith("ing")) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith("ed")) w = w.slice(0, -2);
  if (w.length > 3 && /([b-df-hj-np-tv-z])\1$/.test(w) && !w.endsWith("ll") && !w.endsWith("ss")) w = w.slice(0, -1);
  if (w.length > 3 && w.endsWith("e")) w = w.slice(0, -1);
  return w;
}

const stemmedSynonyms = new Map([...synonyms].map(([from, to]) => [stem(from), stem(to)]));
const stemmedPolarity = new Map([...polarityWords].map(([w, p]) => [stem(w), p]));
const multiValued = new Set([...multiValuedVerbs].map(stem));
const stemmedUnits = new Set([...units].map(stem));

const numeric = /^[$€£]?\d[\d,]*(\.\d+)*[%kmx]?$/i;
const version = /^v\d+(\.\d+)*$/i;
const year = /^(19|20)\d\d$/;
const isoDate = /^\d{4}-\d{2}(-\d{2})?$/;
const timeOfDay = /^\d{1,2}(:\d{2})?(am|pm)$|^\d{1,2}:\d{2}$/i;
const ordinal = /^\d{1,2}(st|nd|rd|th)$/i;
const tokenPattern = /[$€£]?[\p{L}\p{N}][\p{L}\p{N}_.,:/'’+%-]*/gu;

function expandContractions(text: string): string {
  return text
    .replace(/\bwon['’]t\b/gi, "will not")
    .replace(/\bcannot\b/gi, "can not")
    .replace(/n['’]t\b/gi, " not")
    .replace(/['’]s\b/g, "")
    .replace(/['’](re|ve|ll|d|m)\b/gi, "");
}

function classify(word: string, sentenceStart: boolean): Omit<Token, "original"> | null {
  const lower = word.toLowerCase();
  const irregular = irregularForms.get(lower);
  if (irregular !== undefined) return { text: irregular, kind: "word" };
  if (copulas.has(lower)) return { text: "be", kind: "be" };
  if (lower === "may") return { text: "may", kind: "time" };
  if (stopwords.has(lower)) return null;
  const number = numberWords.get(lower);
  if (number !== undefined) return { text: number, kind: "number" };
  if (year.test(word) || isoDate.test(word) || timeOfDay.test(word) || ordinal.test(word)) {
    return { text: lower.replace(/(st|nd|rd|th)$/, ""), kind: "time" };
  }
  if (version.test(word)) return { text: lower.slice(1), kind: "number" };
  if (numeric.test(word)) return { text: lower.replace(/,/g, ""), kind: "number" };
  const stemmed = stem(lower);
  if (months.has(lower) || weekdays.has(lower) || weekdays.has(stemmed)) return { text: stemmed, kind: "time" };
  if (/\d/.test(word)) return { text: lower, kind: "number" };
  // A capital not starting a sentence, or inside a word (iOS, AWS): a name.
  if (/\p{Lu}/u.test(sentenceStart ? word.slice(1) : word)) return { text: lower, kind: "name" };
  return { text: stemmedSynonyms.get(stemmed) ?? stemmed, kind: "word" };
}

const trailingPunctuation = new Set([...".,:/'’+-"]);

// Loops instead of regexes ending in `+$` or starting with a word run: V8 retries those from every
// position of a long run ("a....b", 16 KiB without a space), which is quadratic.

/** A word without the punctuation it ends with ("Berlin." → "Berlin"). */
function withoutTrailingPunctuation(word: string): string {
  let end = word.length;
  while (end > 0 && trailingPunctuation.has(word[end - 1]!)) end--;
  return end === word.length ? word : word.slice(0, end);
}

const preferenceMarkers = [["over"], ["instead", "of"], ["rather", "than"]];

/** "x over y", "x instead of y", "x rather than y": the first such pair of words. */
function preferenceOf(words: readonly string[]): [string, string] | null {
  for (let i = 1; i < words.length; i++) {
    for (const marker of preferenceMarkers) {
      const after = i + marker.length;
      if (after < words.length && words[i - 1] !== "" && marker.every((w, k) => words[i + k] === w)) return [words[i - 1]!, words[after]!];
    }
  }
  return null;
}

/** At most this many clauses are read separately, of a text at most this long (longer ones are documents). */
const maxClauses = 4;
const maxClauseTextChars = 1000;
// Each alternative starts with a fixed character, so a long run of spaces is scanned once.
const clauseSeparator = /[,;]\s*(?:and\s)?|\sand\s/i;

/** Reads one memory's text into the tokens and polarity the rules compare. */
export function statementOf(text: string): Statement {
  const statement = clauseStatement(text);
  if (text.length > maxClauseTextChars) return statement;
  const reading = readText(text);
  statement.frames = reading.frames;
  statement.gist = reading.gist;
  const parts = text.split(clauseSeparator);
  if (parts.length >= 2 && parts.length <= maxClauses) statement.clauses = parts.map((p) => clauseStatement(p.trim()));
  return statement;
}

/** The phrases, compiled once to match in any case. */
const caseless = phrases.map(([pattern, replacement]) => [new RegExp(pattern.source, "gi"), replacement] as const);

function clauseStatement(text: string): Statement {
  let prepared = expandContractions(text);
  for (const [pattern, replacement] of caseless) prepared = prepared.replace(pattern, replacement);
  const matches = [...prepared.matchAll(tokenPattern)];
  const words = matches.map((m) => withoutTrailingPunctuation(m[0]));
  // The first word, and any after ". ", "! ", "? " or ": " (e.g. "Jon: Hey Gina"), starts a sentence;
  // not after an abbreviation ("Dr. Keller").
  const startsSentence = matches.map(
    (m, i) =>
      i === 0 ||
      (/[.!?:]\s*$/.test(prepared.slice(matches[i - 1]!.index!, m.index)) && !abbreviations.has(words[i - 1]!.toLowerCase())),
  );
  const tokens: Token[] = [];
  /** The index in `words` of each token. */
  const wordIndex: number[] = [];
  const polarity: string[] = [];
  let flips = 0;
  const lowerWords = words.map((w) => w.toLowerCase());
  const manyValued = lowerWords.some((w) => multiValued.has(stem(w)));
  words.forEach((word, i) => {
    const lower = lowerWords[i]!;
    // "may" is a month only before a day ("May 12").
    if (lower === "may" && !/^\d/.test(words[i + 1] ?? "")) return;
    if (negations.has(lower)) {
      flips++;
      polarity.push(word);
      return;
    }
    const opposite = stemmedPolarity.get(stem(lower)) ?? polarityWords.get(lower);
    if (opposite) {
      if (opposite.negative) flips++;
      polarity.push(word);
      return;
    }
    const token = classify(word, startsSentence[i]!);
    if (token) {
      tokens.push({ ...token, original: word });
      wordIndex.push(i);
    }
  });
  // Days next to a month are part of the date; a unit after a number is part of the number.
  tokens.forEach((t, i) => {
    const before = tokens[i - 1];
    const after = tokens[i + 1];
    if (t.kind === "number" && /^\d{1,2}$/.test(t.text) && (before?.kind === "time" || after?.kind === "time")) {
      if (months.has(before?.original.toLowerCase() ?? "") || months.has(after?.original.toLowerCase() ?? "")) t.kind = "time";
    }
    if (t.kind === "word" && stemmedUnits.has(t.text) && (before?.kind === "number" || before?.kind === "time")) t.kind = "unit";
  });
  const definiteRole = definiteAfterCopula(lowerWords);
  if (!definiteRole) markSubjectLabels(tokens, wordIndex, lowerWords, matches.map((m) => m[0]));
  const lowerText = ` ${prepared.toLowerCase().replace(/[^\p{L}\p{N}_-]+/gu, " ")} `;
  const preference = preferenceOf(lowerText.trim().split(" "));
  return {
    tokens,
    negative: flips % 2 === 1,
    polarityWords: polarity,
    additive: additiveMarkers.some((m) => lowerText.includes(` ${m} `)),
    preference: preference ? [stem(preference[0]), stem(preference[1])] : null,
    manyValued,
    definiteRole,
    changeMarked: lowerWords.some((w) => changeMarkers.has(w)),
    pastEvent: reportsEvent(lowerWords),
    replaces: replacedValue(lowerWords, tokens, wordIndex),
    clauses: [],
    frames: [],
    gist: null,
  };
}

/** Words that may open a subject before its label ("the API v2 endpoint", "our API v1 clients"). */
const leadingDeterminers = new Set(["the", "a", "an", "this", "that", ...definiteDeterminers]);

/** Words that end a clause: a copula after one belongs to another clause ("lives in Berlin and is a nurse"). */
const clauseWords = new Set(["and", "or", "but", "while", "because", "since", "although", "so"]);

/**
 * Marks the values that say which thing the sentence is about rather than a value of it: any name,
 * date or number before the copula of their clause ("the API key for Stripe is …", "on Mondays the user
 * is …", "Node 1 of the cluster is …"), and a number written with digits right after the first word
 * ("Ticket 4411 …", "PR #57 …", or after a determiner: "the API v2 endpoint …"). Not a number before a
 * unit ("Works 40 hours a week"). Not called when the sentence gives its subject a definite role
 * ("Node 18 is the runtime"): a role has one holder, so another one holding it is a change.
 */
function markSubjectLabels(tokens: Token[], wordIndex: readonly number[], words: readonly string[], raw: readonly string[]): void {
  const copula = words.findIndex((w) => copulas.has(w));
  // Each word's clause: a new one starts after a word ending in ",", ";" or ":", and at "and", "but", ….
  const clauseOf: number[] = [];
  for (let i = 0, clause = 0; i < words.length; i++) {
    if (i > 0 && (/[,;:]$/.test(raw[i - 1]!) || clauseWords.has(words[i]!))) clause++;
    clauseOf.push(clause);
  }
  tokens.forEach((t, k) => {
    const digits = t.kind === "number" && /\d/.test(t.original);
    if ((!digits && t.kind !== "name" && t.kind !== "time") || tokens[k + 1]?.kind === "unit") return;
    const at = wordIndex[k]!;
    if (at < copula && clauseOf[at] === clauseOf[copula]) {
      t.labelsSubject = true;
      return;
    }
    const label = words[at - 1];
    if (!digits || label === undefined || stopwords.has(label) || copulas.has(label) || negations.has(label) || /\d/.test(label)) return;
    if (at === 1 || (at === 2 && leadingDeterminers.has(words[0]!))) t.labelsSubject = true;
  });
}

const presentCopulas = new Set(["is", "are", "am"]);
/** A past form: irregular, or "-ed" but not need, speed, hundred, nor an adjective after "a"/"the" ("a shared drive"). */
const pastTense = (w: string, before: string | undefined) =>
  irregularPasts.has(w) ||
  (w.length >= 5 && w.endsWith("ed") && !w.endsWith("eed") && w !== "hundred" && !(before !== undefined && leadingDeterminers.has(before)));

function reportsEvent(words: readonly string[]): boolean {
  if (words.some((w) => presentCopulas.has(w) || changeMarkers.has(w) || settlingVerbs.has(w))) return false;
  return words.some((w, i) => pastTense(w, words[i - 1]));
}

function definiteAfterCopula(words: readonly string[]): boolean {
  const copula = words.findIndex((w) => copulas.has(w));
  if (copula < 0) return false;
  let next = copula + 1;
  while (next < words.length && changeMarkers.has(words[next]!)) next++;
  return next < words.length && definiteDeterminers.has(words[next]!);
}

/** "switched from X to Y" (or moved, migrated, …): the tokens of X. */
function replacedValue(words: readonly string[], tokens: readonly Token[], wordIndex: readonly number[]): string[] | null {
  for (let i = 0; i + 2 < words.length; i++) {
    if (!changeVerbs.has(words[i]!) || words[i + 1] !== "from") continue;
    const to = words.indexOf("to", i + 2);
    if (to < 0) return null;
    const x = tokens.filter((_, k) => wordIndex[k]! > i + 1 && wordIndex[k]! < to).map((t) => t.text);
    return x.length > 0 ? x : null;
  }
  return null;
}
