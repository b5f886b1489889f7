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

/** The words of a text, punctuation dropped (it marks the word before it instead). */
export function wordsOf(text: string): Word[] {
  const doc = nlp.readDoc(text);
  const words: Word[] = [];
  doc.tokens().each((token: ItemToken) => {
    const pos = token.out(its.pos) as PartOfSpeech;
    if (pos === "PUNCT") {
      const last = words[words.length - 1];
      if (last) last.punctuation = true;
      return;
    }
    const written = token.out();
    words.push({
      text: written,
      lower: written.toLowerCase(),
      lemma: token.out(its.lemma as unknown as typeof its.value).toLowerCase(),
      pos,
      entity: (token.parentEntity()?.out(its.type) as string | undefined) ?? "",
      punctuation: false,
    });
  });
  return words;
}
