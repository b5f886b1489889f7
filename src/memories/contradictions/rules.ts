import { diffHunks, type Hunk } from "./diff.js";
import { statementOf, type Statement, type Token } from "./statement.js";

// The offline contradiction rules over two statements about (perhaps) the same thing. A contradiction is
// the same sentence frame with one incompatible difference: its polarity flipped (negation, opposite), a
// preference reversed, or one value slot holding another number, date or name. Anything else (added
// detail, a second value for a many-valued attribute, a different subject or attribute) is not one.

export type ContradictionRule = "negation" | "opposite" | "preference" | "number" | "date" | "value";

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
};

const valueKinds = { number: "number", time: "date", name: "value" } as const;

function verdict(rule: ContradictionRule, reason: string, shared: number, a: Statement, b: Statement): Verdict {
  const coverage = shared / Math.max(1, a.tokens.length, b.tokens.length);
  return { rule, reason, score: Math.round(ruleConfidence[rule] * (0.7 + 0.3 * coverage) * 1000) / 1000 };
}

const phrase = (tokens: Token[]) => tokens.map((t) => t.original).join(" ");

/** The same sentence with its polarity flipped; at most one trailing word of detail added or dropped. */
function polarityVerdict(a: Statement, b: Statement, hunks: Hunk[], shared: number): Verdict | null {
  const changed = hunks.reduce((n, h) => n + h.removed.length + h.added.length, 0);
  const trailing = (h: Hunk) => h.aStart + h.removed.length === a.tokens.length && h.bStart + h.added.length === b.tokens.length;
  if (changed > 1 || !hunks.every(trailing)) return null;
  const words = [...a.polarityWords, ...b.polarityWords].map((w) => w.toLowerCase());
  const negated = words.some((w) => ["not", "no", "never", "without", "stopped", "quit", "none"].includes(w));
  return negated
    ? verdict("negation", `negation: ${words.join(" / ")}`, shared, a, b)
    : verdict("opposite", `opposite: ${a.polarityWords.join(" ")} vs ${b.polarityWords.join(" ")}`, shared, a, b);
}

/** One value slot replaced: a different number, date or name (or a one-word value after "is"). */
function valueVerdict(a: Statement, b: Statement, hunks: Hunk[], hunk: Hunk, shared: number): Verdict | null {
  // A change in the first word, or words added or dropped before the value, change who or what it is about.
  if (hunk.aStart === 0 || hunk.bStart === 0 || hunks.some((h) => h.aStart < hunk.aStart)) return null;
  const removed = hunk.removed.map((i) => a.tokens[i]!);
  const added = hunk.added.map((i) => b.tokens[i]!);
  // The same value written differently ("555-0101" / "555 0101") is no change.
  const spelled = (ts: Token[]) => ts.map((t) => t.text).join("").replace(/[^\p{L}\p{N}]/gu, "");
  if (spelled(removed) === spelled(added)) return null;
  const manyValued = a.manyValued && b.manyValued;
  const change = `${phrase(removed)} → ${phrase(added)}`;
  if ([...removed, ...added].some((t) => t.kind === "word" || t.kind === "be")) {
    // A common word as the value: only a single one right after "is" / "named" ("the default branch is main").
    const before = a.tokens[hunk.aStart - 1]?.text;
    const single = removed.length === 1 && added.length === 1 && removed[0]!.kind === "word" && added[0]!.kind === "word";
    if (!single || manyValued || (before !== "be" && before !== "name")) return null;
    return verdict("value", `different value: ${change}`, shared, a, b);
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

/** Whether `newer` contradicts `older`, and why; null when it does not. */
export function compareStatements(older: Statement, newer: Statement): Verdict | null {
  const a = older.tokens.map((t) => t.text);
  const b = newer.tokens.map((t) => t.text);
  const hunks = diffHunks(a, b);
  const inHunk = new Set(hunks.flatMap((h) => h.removed));
  const sharedTokens = older.tokens.filter((t, i) => !inHunk.has(i) && t.kind !== "be");
  const shared = sharedTokens.length;
  if (shared === 0) return null;
  if (older.preference && newer.preference) {
    const [x, y] = older.preference;
    const [p, q] = newer.preference;
    if (x === q && y === p) return verdict("preference", `preference reversed: ${x} over ${y} → ${p} over ${q}`, shared, older, newer);
  }
  if (older.negative !== newer.negative) return polarityVerdict(older, newer, hunks, shared);
  const replaced = hunks.filter((h) => h.removed.length > 0 && h.added.length > 0);
  // A value change needs a frame: at least two words in common besides the value.
  if (replaced.length !== 1 || newer.additive || shared < 2) return null;
  return valueVerdict(older, newer, hunks, replaced[0]!, shared);
}

/** Convenience over raw texts (the service keeps statements to compare one text with many). */
export const detectContradiction = (older: string, newer: string): Verdict | null =>
  compareStatements(statementOf(older), statementOf(newer));
