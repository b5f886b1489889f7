// A change that writes its old value next to its new one, whatever the attribute: "Piano: Wed 4:30 → Thu
// 5:00", "ACV revised: $50k → $65k", "Default branch: main (was master)", "done by Biome instead of
// ESLint", "handled by Priya instead of Dev". When the older statement holds that old value and the two
// share a topic word besides the values, the newer one replaces it. Pure; read from the raw text, so terse
// notes that the tagger cannot parse are read too.

export interface NamedChange {
  /** Keys of the old value ("wednesday", "4:30"). */
  old: string[];
  oldText: string;
  /** Keys of the new value. */
  value: string[];
  valueText: string;
  /** The marker as written: "→", "was", "instead of", …. */
  marker: string;
}

/** Short forms of weekdays, so "Wed" is the "Wednesdays" of an older note. */
const weekdayShort = new Map([
  ["mon", "monday"], ["tue", "tuesday"], ["tues", "tuesday"], ["wed", "wednesday"], ["thu", "thursday"], ["thur", "thursday"],
  ["thurs", "thursday"], ["fri", "friday"], ["sat", "saturday"], ["sun", "sunday"],
]);
const weekdays = new Set(weekdayShort.values());

/** Words that are no part of a value: function words and the words around a change. */
const filler = new Set([
  "a", "an", "the", "to", "from", "of", "and", "or", "is", "are", "was", "were", "be", "by", "with", "at", "on", "in", "for", "now", "it",
  "its", "their", "our", "my", "his", "her", "same", "changed", "moved", "revised", "updated",
]);

/** One word's key: lower case, outer punctuation gone, weekdays in full and singular. */
export function valueKey(word: string): string {
  const w = word.toLowerCase().replace(/^[^\p{L}\p{N}$€£+#@]+|[^\p{L}\p{N}%]+$/gu, "");
  const day = weekdayShort.get(w) ?? (w.endsWith("s") && weekdays.has(w.slice(0, -1)) ? w.slice(0, -1) : w);
  return day;
}

/** The keys of a text's words, less fillers: what an old value is looked up in. */
export function valueKeys(text: string): Set<string> {
  return new Set(text.split(/\s+/).map(valueKey).filter((k) => k !== "" && !filler.has(k)));
}

const keysOf = (words: string[]) => words.map(valueKey).filter((k) => k !== "" && !filler.has(k));
/** At most this many words of a value on either side of a marker. */
const maxValueWords = 4;
/** Words after which a value has ended: "→ $65k after adding …". */
const valueEnd = /^(after|because|since|for|from|when|due|as|until|following|so|but|which|who)$/i;

/** The words of a value after a marker, up to punctuation (not a decimal point or a time's colon) or a clause word. */
function valueAfter(text: string): string[] {
  const words: string[] = [];
  for (const raw of text.trim().split(/\s+/)) {
    // "→ Enterprise (60 seats)": a parenthesis after the value is a note on it.
    if (raw === "" || valueEnd.test(raw) || words.length >= maxValueWords || (raw.startsWith("(") && words.length > 0)) break;
    words.push(raw);
    if (/[,;.)(!?]$/.test(raw) && !/\d[.:]\d*$/.test(raw)) break;
  }
  return words;
}

/** The words of a value before a marker, back to a ":", ",", "(" or a function word. */
function valueBefore(text: string): string[] {
  const segment = text.split(/[:;,(]\s/).pop() ?? "";
  const words = segment.trim().split(/\s+/).filter((w) => w !== "");
  const out: string[] = [];
  for (let i = words.length - 1; i >= 0 && out.length < maxValueWords; i--) {
    if (filler.has(valueKey(words[i]!)) && out.length > 0) break;
    if (!filler.has(valueKey(words[i]!))) out.unshift(words[i]!);
  }
  return out;
}

const arrow = /\s(→|->|=>)\s/;
const wasNote = /\((?:was|previously|formerly)\s+([^)]{1,60})\)/i;
const insteadOf = /\b(instead of|rather than|in place of|replacing)\s/i;

/** A tagged word, as much of it as this reader needs. */
interface TaggedWord {
  lower: string;
  text: string;
  pos: string;
}
const valuePos = new Set(["NOUN", "PROPN", "NUM", "ADJ", "X"]);

/** The value right before "instead of": the nouns, names and numbers before it ("drinks tea | instead of"). */
function taggedValueBefore(words: readonly TaggedWord[], marker: string): string[] | null {
  const at = words.findIndex((w) => w.lower === marker);
  if (at <= 0) return null;
  let start = at;
  while (start > 0 && at - start < maxValueWords && valuePos.has(words[start - 1]!.pos)) start--;
  return words.slice(start, at).map((w) => w.text);
}

/**
 * The old and new values a text names around a change marker, or null. Texts over 400 characters are not
 * read. `words`, the text's tagged words, bound the new value before "instead of" to its nouns and names.
 */
export function namedChangeOf(text: string, words: readonly TaggedWord[] = []): NamedChange | null {
  if (text.length > 400) return null;
  const made = (oldWords: string[], newWords: string[], marker: string): NamedChange | null => {
    const old = keysOf(oldWords);
    const value = keysOf(newWords);
    if (old.length === 0 || value.length === 0 || old.every((k) => value.includes(k))) return null;
    // As written, less the fillers at either end ("coffee now." → "coffee").
    const clean = (ws: string[]) => {
      let [from, to] = [0, ws.length];
      while (from < to && filler.has(valueKey(ws[from]!))) from++;
      while (to > from && filler.has(valueKey(ws[to - 1]!))) to--;
      return ws.slice(from, to).join(" ").replace(/[,;.]$/, "");
    };
    return { old, oldText: clean(oldWords), value, valueText: clean(newWords), marker };
  };
  const a = arrow.exec(text);
  if (a) return made(valueBefore(text.slice(0, a.index)), valueAfter(text.slice(a.index + a[0].length)), a[1]!);
  const w = wasNote.exec(text);
  if (w) return made(w[1]!.split(/\s+/).slice(0, maxValueWords), valueBefore(text.slice(0, w.index)), "was");
  const i = insteadOf.exec(text);
  if (i) {
    const before = taggedValueBefore(words, i[1]!.split(" ")[0]!.toLowerCase()) ?? valueBefore(text.slice(0, i.index));
    return made(valueAfter(text.slice(i.index + i[0].length)), before, i[1]!.toLowerCase());
  }
  return null;
}
