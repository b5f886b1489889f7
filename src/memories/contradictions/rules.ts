import { diffHunks, type Hunk } from "./diff.js";
import { negations, statusWords, vagueTimeWords } from "./lexicon.js";
import { statementOf, type Statement, type Token } from "./statement.js";
import { qualifiersClash } from "./gist.js";
import { assessClassChange, assessGist, assessNamedChange, assessStatements, assessTypedValue, type FrameRule } from "./update-rules.js";

// The offline contradiction rules over two statements about (perhaps) the same thing. A contradiction is
// the same sentence frame with one incompatible difference: its polarity flipped (negation, opposite), a
// preference reversed, or one value slot holding another number, date or name. Anything else (added
// detail, a second value for a many-valued attribute, a different subject or attribute) is not one.

/** "judge": the configured judge decided (see judge.ts). */
export type ContradictionRule = "negation" | "opposite" | "preference" | "number" | "date" | "value" | FrameRule | "judge";

export interface Verdict {
  rule: ContradictionRule;
  /** Strength, 0 to 1: the rule's confidence scaled by how much of the two sentences is shared. */
  score: number;
  /** Short, human-readable explanation. */
  reason: string;
}

const ruleConfidence: Record<ContradictionRule, number> = {
  negation: 0.9,
  opposite: 0.9,
  preference: 0.85,
  number: 0.85,
  date: 0.85,
  value: 0.8,
  attribute: 0.8,
  change: 0.85,
  removal: 0.85,
  topic: 0.75,
  judge: 0.9,
};

const valueKinds = { number: "number", time: "date", name: "value" } as const;

function verdict(rule: ContradictionRule, reason: string, shared: number, a: Statement, b: Statement): Verdict {
  const coverage = shared / Math.max(1, a.tokens.length, b.tokens.length);
  return { rule, reason, score: Math.round(ruleConfidence[rule] * (0.7 + 0.3 * coverage) * 1000) / 1000 };
}

/** Negative by a negation ("not", "never", "stopped"), not only by an opposite ("private", "hates"). */
const negated = (s: Statement) => s.polarityWords.some((w) => negations.has(w.toLowerCase()));

const phrase = (tokens: Token[]) => tokens.map((t) => t.original).join(" ");

/**
 * The same sentence with its polarity flipped; at most one trailing word of detail added or dropped, or
 * a negated newer statement that only leaves out up to two words ("plays bass in a band" → "no longer
 * plays in the band", "works at Finchly" → "quit Finchly").
 */
function polarityVerdict(a: Statement, b: Statement, hunks: Hunk[], shared: number): Verdict | null {
  let removed = 0;
  let added = 0;
  for (const h of hunks) {
    removed += h.removed.length;
    added += h.added.length;
  }
  const trailing = (h: Hunk) => h.aStart + h.removed.length === a.tokens.length && h.bStart + h.added.length === b.tokens.length;
  const trailingDetail = removed + added <= 1 && hunks.every(trailing);
  const saysLess = b.negative && added === 0 && removed <= 2;
  if (!trailingDetail && !saysLess) return null;
  const words = [...a.polarityWords, ...b.polarityWords].map((w) => w.toLowerCase());
  const negated = words.some((w) => ["not", "no", "never", "without", "stopped", "quit", "none"].includes(w));
  return negated
    ? verdict("negation", `negation: ${words.join(" / ")}`, shared, a, b)
    : verdict("opposite", `opposite: ${a.polarityWords.join(" ")} vs ${b.polarityWords.join(" ")}`, shared, a, b);
}

const onlyCopulas = (h: Hunk, a: Statement, b: Statement) =>
  h.removed.every((i) => a.tokens[i]!.kind === "be") && h.added.every((i) => b.tokens[i]!.kind === "be");

const isValue = (t: Token) => t.kind === "name" || t.kind === "number" || t.kind === "time" || t.kind === "unit";

/** Words of detail after an old value that a new value may leave out. */
const maxDroppedDetail = 3;

/** The leading value tokens of a run (a name, number or date), or the whole run when it starts otherwise. */
function leadingValue(indices: number[], tokens: Token[]): number[] {
  let end = 0;
  while (end < indices.length && isValue(tokens[indices[end]!]!)) end++;
  return end === 0 ? indices : indices.slice(0, end);
}

/**
 * A role one holder has, held by someone else: only the subject before the copula changes, and the
 * copula is followed by a definite determiner ("Priya Raman is the user's manager" → "Tom Becker is the
 * user's manager"). "Alice is a nurse" / "Bob is a nurse" is not one.
 */
function roleVerdict(a: Statement, b: Statement, hunks: Hunk[], shared: number): Verdict | null {
  if (hunks.length !== 1 || !a.definiteRole || !b.definiteRole || shared < 2) return null;
  const [h] = hunks as [Hunk];
  const subjectA = a.tokens.findIndex((t) => t.kind === "be");
  const subjectB = b.tokens.findIndex((t) => t.kind === "be");
  if (h.aStart !== 0 || h.bStart !== 0 || subjectA <= 0 || subjectB <= 0) return null;
  if (h.removed.length !== subjectA || h.added.length !== subjectB) return null;
  const holder = (s: Statement, n: number) => phrase(s.tokens.slice(0, n));
  return verdict("value", `different holder: ${holder(a, subjectA)} → ${holder(b, subjectB)}`, shared, a, b);
}

/** A name, or a capitalised word with digits ("N26", "EC2"), which the tokenizer calls a number. */
const nameLike = (t: Token) => t.kind === "name" || (t.kind === "number" && /^\p{Lu}[\p{L}\d]*\d[\p{L}\d]*$/u.test(t.original));

const timeOrNumber = (t: Token) => t.kind === "time" || t.kind === "number" || t.kind === "unit";

/** Both are "<one word> is <a time or number>", and the hunk replaces that value. */
function bareTimeOrNumber(a: Statement, b: Statement, hunk: Hunk): boolean {
  if (a.tokens.length > 3 || b.tokens.length > 3 || hunk.aStart !== 2 || hunk.bStart !== 2) return false;
  return a.tokens[1]!.kind === "be" && b.tokens[1]!.kind === "be" && hunk.removed.every((i) => timeOrNumber(a.tokens[i]!)) && hunk.added.every((i) => timeOrNumber(b.tokens[i]!));
}

/** A value's letters and digits: the same value written differently ("555-0101" / "555 0101") spells the same. */
const spelled = (ts: Token[]) => ts.map((t) => t.text).join("").replace(/[^\p{L}\p{N}]/gu, "");

/**
 * Where "is" stands when both statements are "<the same subject> is …", the subject at least
 * `minSubject` words; -1 otherwise.
 */
function sameSubjectIs(a: Statement, b: Statement, minSubject: number): number {
  const copula = a.tokens.findIndex((t) => t.kind === "be");
  const is = (t: Token | undefined) => t?.kind === "be" && t.original.toLowerCase() === "is";
  if (copula < minSubject || !is(a.tokens[copula]) || !is(b.tokens[copula])) return -1;
  for (let i = 0; i < copula; i++) if (a.tokens[i]!.text !== b.tokens[i]!.text) return -1;
  return copula;
}

const maxWholeValueWords = 6;

/** A word that makes a time vague ("late" May): see vagueTimeWords. */
const isVague = (t: Token) => vagueTimeWords.has(t.original.toLowerCase());

/**
 * The whole value of "<subject> is <value>" replaced, the subject the same in two words or more ("the
 * customer's shipping address is 12 Oak Street, Leeds" → "… is 4 Mill Lane, York"): values of several
 * words that the one-slot rule cannot compare. Values of at most six words without a copula of their
 * own: a longer one is a sentence or more of conversation ("That bowl is gorgeous! The black and white
 * design looks so fancy."). Not when one value begins with the other (detail added or left out), and
 * not for "are" (a list may grow).
 */
function wholeValueVerdict(a: Statement, b: Statement, shared: number): Verdict | null {
  const copula = sameSubjectIs(a, b, 2);
  if (copula < 0 || (a.manyValued && b.manyValued)) return null;
  const older = a.tokens.slice(copula + 1);
  const newer = b.tokens.slice(copula + 1);
  const common = Math.min(older.length, newer.length);
  if (Math.max(older.length, newer.length) > maxWholeValueWords || [...older, ...newer].some((t) => t.kind === "be")) return null;
  if (common === 0 || older.slice(0, common).every((t, i) => t.text === newer[i]!.text) || spelled(older) === spelled(newer)) return null;
  // "is in late May" → "is on Saturday, May 24, at …": a vague time made exact.
  if (older.some(isVague) || newer.some(isVague)) return null;
  return verdict("value", `different value: ${phrase(older)} → ${phrase(newer)}`, shared, a, b);
}

/**
 * A state named by an opposite replaced by another state ("the account is active" → "… is suspended"):
 * one side is "<subject> is <opposite>" (the opposite read into its polarity, so no token holds it), the
 * other "<the same subject> is <one word>", a participle or a status word. Any other adjective may hold
 * alongside ("the repository is public" and "… is popular"), so only these.
 */
function stateVerdict(a: Statement, b: Statement, shared: number): Verdict | null {
  const copula = sameSubjectIs(a, b, 1);
  if (copula < 0) return null;
  const namedByOpposite = (s: Statement) => s.tokens.length === copula + 1 && s.polarityWords.length === 1 && !negations.has(s.polarityWords[0]!.toLowerCase());
  const oneState = (s: Statement) => {
    const word = s.tokens[copula + 1];
    if (s.tokens.length !== copula + 2 || s.polarityWords.length > 0 || word?.kind !== "word") return false;
    const lower = word.original.toLowerCase();
    return lower.endsWith("ed") || statusWords.has(lower);
  };
  const stateOf = (s: Statement) => (s.polarityWords.length > 0 ? s.polarityWords[0]! : s.tokens[copula + 1]!.original);
  if (!(namedByOpposite(a) && oneState(b)) && !(oneState(a) && namedByOpposite(b))) return null;
  return verdict("value", `different value: ${stateOf(a)} → ${stateOf(b)}`, shared, a, b);
}

/** "switched from X to Y" after a statement about X with the same subject. */
function switchVerdict(a: Statement, b: Statement, shared: number): Verdict | null {
  const from = b.replaces;
  if (from === null || a.tokens[0]?.text !== b.tokens[0]?.text) return null;
  if (a.replaces !== null && a.replaces.join(" ") === from.join(" ")) return null;
  const have = new Set(a.tokens.map((t) => t.text));
  if (!from.every((t) => have.has(t))) return null;
  return verdict("value", `switched from ${from.join(" ")}`, shared, a, b);
}

/** One value slot replaced: a different number, date or name (or a one-word value after "is"). */
function valueVerdict(a: Statement, b: Statement, hunks: Hunk[], hunk: Hunk, shared: number): Verdict | null {
  // A change in the first word, or words added or dropped before the value, change who or what it is
  // about; a copula does not ("is employed by" / "works for").
  if (hunk.aStart === 0 || hunk.bStart === 0 || hunks.some((h) => h.aStart < hunk.aStart && !onlyCopulas(h, a, b))) return null;
  // A new value that ends the newer sentence may drop a little detail that followed the old one
  // ("works at Finchly as a backend engineer" → "works at Stripe").
  const atEnd = hunk.aStart + hunk.removed.length === a.tokens.length && hunk.bStart + hunk.added.length === b.tokens.length;
  const value = leadingValue(hunk.removed, a.tokens);
  const dropsDetail = atEnd && hunk.added.every((i) => isValue(b.tokens[i]!)) && value.length < hunk.removed.length && hunk.removed.length - value.length <= maxDroppedDetail;
  // A copula next to the value is not part of it ("home is in Hamburg" → "lives in Cologne").
  const removed = (dropsDetail ? value : hunk.removed).map((i) => a.tokens[i]!).filter((t) => t.kind !== "be");
  const added = hunk.added.map((i) => b.tokens[i]!).filter((t) => t.kind !== "be");
  if (removed.length === 0 || added.length === 0) return null;
  // The same value written differently ("555-0101" / "555 0101") is no change.
  if (spelled(removed) === spelled(added)) return null;
  // "in late May" → "on Saturday, May 24": a vague time made exact is detail, not a change.
  if (removed.every(isVague) || added.every(isVague)) return null;
  const manyValued = a.manyValued && b.manyValued;
  const change = `${phrase(removed)} → ${phrase(added)}`;
  if ([...removed, ...added].some((t) => t.kind === "word" || t.kind === "be")) {
    // A common word as the value: only a single one right after "is" / "named" ("the default branch is main").
    const before = a.tokens[hunk.aStart - 1]?.text;
    const single = removed.length === 1 && added.length === 1 && removed[0]!.kind === "word" && added[0]!.kind === "word";
    if (!single || manyValued || (before !== "be" && before !== "name")) return null;
    return verdict("value", `different value: ${change}`, shared, a, b);
  }
  // A name written with digits ("ING" → "N26", "S3" → "Backblaze") reads as a number: one name for another.
  if (removed.length === 1 && added.length === 1 && removed[0]!.kind !== added[0]!.kind && [removed[0]!, added[0]!].every(nameLike)) {
    return manyValued ? null : verdict("value", `different value: ${change}`, shared, a, b);
  }
  const kinds = (["number", "time", "name"] as const).filter((kind) => {
    const of = (ts: Token[]) => ts.filter((t) => t.kind === kind).map((t) => t.text).sort().join(" ");
    return of(removed) !== of(added);
  });
  if (kinds.length !== 1) return null;
  const kind = kinds[0]!;
  if (!removed.some((t) => t.kind === kind) || !added.some((t) => t.kind === kind)) return null;
  if (kind === "name" && manyValued) return null;
  return verdict(valueKinds[kind], `different ${valueKinds[kind]}: ${change}`, shared, a, b);
}

/**
 * Whether `newer` contradicts `older`, and why; null when it does not. A single-clause newer statement
 * that negates one clause of a compound older one contradicts it too ("is vegetarian and does not eat
 * fish" → "is no longer vegetarian").
 */
export function compareStatements(older: Statement, newer: Statement): Verdict | null {
  const whole = compareWhole(older, newer);
  if (whole !== null || newer.clauses.length > 0) return whole;
  for (const clause of older.clauses) {
    if (clause.negative === newer.negative) continue;
    const v = compareWhole(clause, newer, 2);
    if (v !== null && (v.rule === "negation" || v.rule === "opposite")) return v;
  }
  return null;
}

/** `minShared`: words the two must have in common besides copulas (a clause alone says little). */
function compareWhole(older: Statement, newer: Statement, minShared = 1): Verdict | null {
  const a = older.tokens.map((t) => t.text);
  const b = newer.tokens.map((t) => t.text);
  const hunks = diffHunks(a, b);
  // Another ticket number, or another name in the subject: a statement about another thing, however alike the rest.
  if (hunks.some((h) => h.removed.some((i) => older.tokens[i]!.labelsSubject) || h.added.some((i) => newer.tokens[i]!.labelsSubject))) return null;
  const inHunk = new Set(hunks.flatMap((h) => h.removed));
  const sharedTokens = older.tokens.filter((t, i) => !inHunk.has(i) && t.kind !== "be");
  const shared = sharedTokens.length;
  if (shared < minShared) return null;
  if (older.preference && newer.preference) {
    const [x, y] = older.preference;
    const [p, q] = newer.preference;
    if (x === q && y === p) return verdict("preference", `preference reversed: ${x} over ${y} → ${p} over ${q}`, shared, older, newer);
  }
  if (!newer.additive) {
    const state = stateVerdict(older, newer, shared);
    if (state !== null) return state;
  }
  if (older.negative !== newer.negative) return polarityVerdict(older, newer, hunks, shared);
  // Two things not so ("no tabs in Python files" / "no tabs in YAML files") never exclude each other;
  // two opposites can ("the private repo is on GitHub" / "… on GitLab").
  if (older.negative && negated(older) && negated(newer)) return null;
  if (hunks.length === 0 || newer.additive) return null;
  // Two reports of what happened ("failed on May 3" / "failed on May 4") are two occurrences.
  if (older.pastEvent && newer.pastEvent) return null;
  const switched = switchVerdict(older, newer, shared);
  if (switched !== null) return switched;
  const replaced = hunks.filter((h) => h.removed.length > 0 && h.added.length > 0);
  if (replaced.length !== 1) return wholeValueVerdict(older, newer, shared);
  const role = roleVerdict(older, newer, hunks, shared);
  if (role !== null) return role;
  // A value change needs a frame: at least two words in common besides the value, or one when the newer
  // statement says it is so now ("The user is single" → "The user is now married") or is a bare "X is
  // <time or number>" ("Standup is at 9:30" → "Standup is at 10:00").
  if (shared < (newer.changeMarked || bareTimeOrNumber(older, newer, replaced[0]!) ? 1 : 2)) return null;
  return valueVerdict(older, newer, hunks, replaced[0]!, shared) ?? wholeValueVerdict(older, newer, shared);
}

/** What the detector makes of a pair: an update (with its verdict), a near miss kept beside, or a doubt. */
export type PairAssessment =
  | { kind: "update"; verdict: Verdict }
  | { kind: "kept"; reason: string }
  | { kind: "doubtful"; reason: string };

/**
 * Whether `newer` updates `older`: the sentence rules first (one frame, one slot changed), then the
 * statements' frames (subject, attribute, value, markers). `similarity` is the two texts' cosine, which
 * decides between two values of a predicate outside the taxonomy (0 when unknown).
 */
export function assessPair(older: Statement, newer: Statement, similarity = 0): PairAssessment | null {
  const sentence = compareStatements(older, newer);
  if (sentence) return { kind: "update", verdict: sentence };
  if (older.gist && newer.gist && qualifiersClash(older.gist.qualifiers, newer.gist.qualifiers)) {
    return { kind: "kept", reason: `another attribute: ${[...newer.gist.qualifiers].join(", ")}, not ${[...older.gist.qualifiers].join(", ")}` };
  }
  // A change dated before the older statement's ("moved … in November 2019" after "moved … in December
  // 2021") is not what holds now.
  const olderDate = older.gist?.dated ?? null;
  const newerDate = newer.gist?.dated ?? null;
  if (olderDate !== null && newerDate !== null && newerDate < olderDate) return { kind: "kept", reason: "an earlier change than the older memory's, by the dates they give" };
  const conversation = (older.gist?.conversational ?? false) || (newer.gist?.conversational ?? false);
  let framed = assessStatements(older.frames, newer.frames, similarity, conversation);
  // A change that writes the old value beside the new one stands unless a frame found a near miss other
  // than detail (a frame reads "with Vitest instead of Jest" as Jest with more detail).
  if (framed?.kind !== "update" && (framed?.kind !== "kept" || framed.detail) && older.gist && newer.gist) {
    framed = assessNamedChange(older.gist, newer.gist) ?? framed;
  }
  // A frame's near miss stands; otherwise the topic may still show a change no frame names.
  // …unless both frames name attributes and none is shared: "the user's manager Priya moved to Potsdam".
  const named = (s: Statement) => s.frames.some((f) => f.attribute !== null);
  const attributesDiffer = named(older) && named(newer) && !older.frames.some((o) => newer.frames.some((n) => o.attribute?.id === n.attribute?.id));
  if (framed?.kind !== "update" && framed?.kind !== "kept" && older.gist && newer.gist) {
    framed = assessTypedValue(older.gist, newer.gist) ?? assessClassChange(older.gist, newer.gist) ?? framed;
  }
  if (framed?.kind !== "update" && framed?.kind !== "kept" && !attributesDiffer && older.gist && newer.gist) {
    framed = assessGist(older.gist, newer.gist, similarity) ?? framed;
  }
  if (framed?.kind !== "update") return framed;
  const score = Math.round(ruleConfidence[framed.rule] * 1000) / 1000;
  return { kind: "update", verdict: { rule: framed.rule, score, reason: framed.reason } };
}

/** Convenience over raw texts (the service keeps statements to compare one text with many). */
export const detectContradiction = (older: string, newer: string, similarity = 0): Verdict | null => {
  const assessed = assessPair(statementOf(older), statementOf(newer), similarity);
  return assessed?.kind === "update" ? assessed.verdict : null;
};
