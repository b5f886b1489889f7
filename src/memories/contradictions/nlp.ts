import winkNLP, { type ItemToken, type PartOfSpeech } from "wink-nlp";
import model from "wink-eng-lite-web-model";

// Tagging, lemmas and entities for the update detector, from wink-nlp's English model (offline, in the
// package). Chosen over compromise: 0.06 against 0.6 ms a sentence on the same 2-core machine (AMD EPYC,
// 2026-11), with as good verb lemmas and part-of-speech tags on agent memories. Loaded once at import
// (about 130 ms), so no request pays for it.

const nlp = winkNLP(model, ["sbd", "pos", "ner", "negation"]);
const its = nlp.its;

export interface Word {
  /** As written. */
  text: string;
  /** Lower case. */
  lower: string;
  /** Lower-case lemma ("moved" → "move", "took" → "take"). */
  lemma: string;
  pos: PartOfSpeech;
  /** The entity the word is part of (DATE, TIME, DURATION, CARDINAL, EMAIL, URL, …), or "". */
  entity: string;
  /** Whether punctuation other than a word's own follows it (a clause boundary candidate). */
  punctuation: boolean;
}

/** Characters that join the parts of one written token ("v2.14.3", "us-east-1", "Europe/Amsterdam"). */
const joiners = /^[.\-/_:+]$/;
const alphanumeric = /^[\p{L}\p{N}]/u;

/**
 * The words of a text, punctuation dropped (it marks the word before it instead). Parts the tagger
 * splits but the text writes as one ("v2.14.3", "us-east-1") are one word again, a name or a number.
 */
export function wordsOf(text: string): Word[] {
  const doc = nlp.readDoc(text);
  const words: Word[] = [];
  /** A joiner written right after the last word, kept until a part follows it. */
  let pending: string | null = null;
  doc.tokens().each((token: ItemToken) => {
    const pos = token.out(its.pos) as PartOfSpeech;
    const written = token.out();
    const glued = token.out(its.precedingSpaces) === "";
    const last = words[words.length - 1];
    if (last && glued && pending === null && joiners.test(written) && alphanumeric.test(last.text)) {
      pending = written;
      return;
    }
    if (last && glued && alphanumeric.test(written) && (pending !== null || /\d$/.test(last.text) && /^\d/.test(written))) {
      last.text += (pending ?? "") + written;
      last.lower = last.text.toLowerCase();
      last.lemma = last.lower;
      last.pos = /\p{L}/u.test(last.text) ? (/\d/.test(last.text) || last.pos === "PROPN" ? "PROPN" : last.pos) : "NUM";
      pending = null;
      return;
    }
    if (pending !== null && last) last.punctuation = true;
    pending = null;
    // "Stark Logistics' account manager": the apostrophe of a plural's possessive is a word.
    const possessive = pos === "PUNCT" && glued && (written === "'" || written === "’") && last !== undefined && /s$/i.test(last.text);
    if (pos === "PUNCT" && !possessive) {
      if (last) last.punctuation = true;
      return;
    }
    words.push({
      text: written,
      lower: possessive ? "'s" : written.toLowerCase(),
      // wink declares its.lemma with the model's add-ons as a parameter; out() passes them itself.
      lemma: token.out(its.lemma as unknown as typeof its.value).toLowerCase(),
      pos: possessive ? "PART" : pos,
      entity: (token.parentEntity()?.out(its.type) as string | undefined) ?? "",
      punctuation: false,
    });
  });
  if (pending !== null && words.length > 0) words[words.length - 1]!.punctuation = true;
  joinNegatedCompounds(words);
  retag(words);
  return words;
}

const subjectPronouns = new Set(["we", "they", "i", "you"]);

/** "won't-fix", "can't-reproduce" (read as "wo" + "n't-fix"): a status written as one word, not a "will not". */
function joinNegatedCompounds(words: Word[]): void {
  for (let i = words.length - 1; i > 0; i--) {
    const w = words[i]!;
    if (!/^n['’]t-\p{L}/u.test(w.lower)) continue;
    const before = words[i - 1]!;
    before.text += w.text;
    before.lower = before.lemma = before.text.toLowerCase();
    before.pos = "ADJ";
    before.punctuation = w.punctuation;
    words.splice(i, 1);
  }
}

/**
 * Mends the tagger's usual slips on agent memories: an identifier ("new_checkout", "v2") and a capitalised
 * word inside a sentence are names; a verb right before another verb is a noun ("the mobile app launch
 * slipped"); a bare verb that ends a clause after "is" is a noun ("the default branch is master").
 */
function retag(words: Word[]): void {
  words.forEach((w, i) => {
    const next = words[i + 1];
    const before = words[i - 1];
    // "We keep logs …", "They run tests …": after a personal pronoun, a noun then a verb in -s are a verb and its object.
    if ((w.pos === "NOUN" || w.pos === "VERB") && next?.pos === "VERB" && next.lower.endsWith("s") && w.lower === w.lemma && subjectPronouns.has(before?.lower ?? "") && i === 1) {
      w.pos = "VERB";
      next.pos = "NOUN";
      next.lemma = next.lower.slice(0, -1);
      return;
    }
    if (/\p{L}/u.test(w.text) && (/\d/.test(w.text) || w.text.includes("_")) && w.pos !== "NUM") w.pos = "PROPN";
    // "Omar's address changed": after a possessive and before a verb, a "verb" is the possessed noun.
    else if (w.pos === "VERB" && before?.lower === "'s" && (next?.pos === "VERB" || next?.pos === "AUX") && w.lower === w.lemma) w.pos = "NOUN";
    // A capitalised "verb" inside a sentence is a name: "joined Tessellate Health".
    else if (w.pos === "VERB" && i > 0 && !before?.punctuation && /^\p{Lu}/u.test(w.text)) w.pos = "PROPN";
    // "the mobile app launch slipped", "Deploys moved": a base or plural form before a verb is a noun.
    else if (
      w.pos === "VERB" && next?.pos === "VERB" && (w.lower === w.lemma || w.lower.endsWith("s")) && before?.pos !== "AUX" && before?.pos !== "PART" && !w.punctuation
    ) w.pos = "NOUN";
    else if (w.pos === "VERB" && before?.lemma === "be" && w.lower === w.lemma && (next === undefined || w.punctuation)) w.pos = "NOUN";
    // "the deal's expected close date", "the revised budget": a participle between a determiner or a
    // possessive and a noun is an adjective.
    else if (
      w.pos === "VERB" && w.lower.endsWith("ed") && w.lower !== w.lemma && (before?.pos === "DET" || before?.lower === "'s") && (next?.pos === "NOUN" || next?.pos === "ADJ")
    ) w.pos = "ADJ";
  });
}
