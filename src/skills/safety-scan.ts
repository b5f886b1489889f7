import { eventLoopSlices, type EventLoopSlices } from "../event-loop-slices.js";
import { lineRules, type LineRule, type Severity } from "./safety-rules.js";

// The offline safety scan of a skill: SKILL.md and every bundled text file, line by line, against the
// rules of safety-rules.ts plus character checks (invisible, bidirectional and tag characters, words that
// mix scripts to look like a command). Binary files (base64) are not scanned. Bounded: lines longer than
// maxLineChars are scanned in overlapping windows, every pattern's quantifiers are bounded, and the scan
// lets the event loop run every few milliseconds (a 4 MiB skill of near-misses takes about a second).

export interface ScanFinding {
  rule: string;
  severity: Severity;
  file: string;
  line: number;
  excerpt: string;
  message: string;
}

export interface ScannedFile {
  path: string;
  /** The file's text; absent for binary files. */
  text?: string;
}

const maxLineChars = 4096;
const windowOverlap = 512;
const excerptChars = 120;
/** Per file and rule: enough to show a pattern without flooding a listing. */
const maxFindingsPerRule = 5;

// Bidirectional overrides and isolates reorder what a reader sees (Trojan Source); tag characters carry
// hidden ASCII that models read. Zero-width characters hide text inside words.
const bidiOrTag = /[\u202A-\u202E\u2066-\u2069]|\uDB40[\uDC00-\uDC7F]/;
const zeroWidth = /[\u200B-\u200D\u2060\u180E]|(?!^)\uFEFF/;

// Cyrillic and Greek letters drawn like Latin ones.
const confusables: Record<string, string> = {
  "а": "a", "с": "c", "е": "e", "о": "o", "р": "p", "х": "x", "у": "y", "і": "i", "ј": "j", "ѕ": "s", "һ": "h", "ԁ": "d", "ɡ": "g", "ӏ": "l",
  "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "К": "K", "М": "M", "О": "O", "Р": "P", "Т": "T", "Х": "X",
  "α": "a", "ο": "o", "ρ": "p", "ν": "v", "ι": "i", "κ": "k", "τ": "t", "Ο": "O", "Α": "A", "Ρ": "P",
};
const commandWords = new Set(["curl", "wget", "bash", "sh", "sudo", "chmod", "python", "python3", "node", "powershell", "pwsh", "iex", "eval", "exec", "ssh", "scp", "rm", "git", "npm", "pip", "npx", "http", "https"]);
const mixedWord = /[A-Za-z\u0370-\u03FF\u0400-\u04FF\u0500-\u052F\u0261]{2,64}/g;
const latin = /[A-Za-z]/;
const nonLatin = /[\u0370-\u03FF\u0400-\u04FF\u0500-\u052F\u0261]/;

const escapeInvisible = (s: string) =>
  s.replace(/[\u0000-\u001f\u007f\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]|\uDB40[\uDC00-\uDC7F]/g, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);

function excerptOf(line: string, index: number, length: number): string {
  const start = Math.max(0, index - 20);
  const text = line.slice(start, Math.min(line.length, start + Math.max(length + 20, 60), start + excerptChars));
  return escapeInvisible(text).slice(0, excerptChars * 2);
}

/** Windows of a line short enough for the rules; a match across a window border is found in the overlap. */
function* windows(line: string): Generator<{ text: string; offset: number }> {
  if (line.length <= maxLineChars) {
    yield { text: line, offset: 0 };
    return;
  }
  for (let offset = 0; offset < line.length; offset += maxLineChars - windowOverlap) {
    yield { text: line.slice(offset, offset + maxLineChars), offset };
  }
}

function homoglyphCommand(text: string): { index: number; word: string } | undefined {
  if (!nonLatin.test(text)) return undefined;
  for (const m of text.matchAll(mixedWord)) {
    const word = m[0];
    if (!latin.test(word) || !nonLatin.test(word)) continue;
    const folded = [...word].map((c) => confusables[c] ?? c).join("");
    if (commandWords.has(folded.toLowerCase())) return { index: m.index, word };
  }
  return undefined;
}

function firstHit(rule: LineRule, text: string): RegExpExecArray | undefined {
  for (const pattern of rule.patterns) {
    const m = pattern.exec(text);
    if (m && !rule.ignore?.(m[0])) return m;
  }
  return undefined;
}

/** One line's findings; a long line's windows are scanned one at a time, letting the event loop run between them. */
async function scanLine(file: string, lineNo: number, line: string, add: (f: ScanFinding) => void, slices: EventLoopSlices): Promise<void> {
  const found = new Set<string>();
  for (const w of windows(line)) {
    const lower = w.text.toLowerCase();
    for (const rule of lineRules) {
      if (found.has(rule.name) || (rule.gate && !rule.gate.some((g) => lower.includes(g)))) continue;
      const hit = firstHit(rule, w.text);
      if (!hit) continue;
      found.add(rule.name);
      add({ rule: rule.name, severity: rule.severity, file, line: lineNo, excerpt: excerptOf(line, w.offset + hit.index, hit[0].length), message: rule.message });
    }
    if (slices.due) await slices.pause();
  }
  const bidi = bidiOrTag.exec(line);
  if (bidi) add({ rule: "hidden-unicode", severity: "critical", file, line: lineNo, excerpt: excerptOf(line, bidi.index, 1), message: "holds bidirectional-override or tag characters that change or hide what a reader sees" });
  const zero = zeroWidth.exec(line);
  if (zero) add({ rule: "invisible-unicode", severity: "warning", file, line: lineNo, excerpt: excerptOf(line, zero.index, 1), message: "holds zero-width characters" });
  const homoglyph = homoglyphCommand(line.slice(0, maxLineChars));
  if (homoglyph) {
    add({ rule: "homoglyph-command", severity: "critical", file, line: lineNo, excerpt: excerptOf(line, homoglyph.index, homoglyph.word.length), message: "writes a command with look-alike letters from another script" });
  }
}

/** Every finding in the files, critical first, then by file and line. */
export async function scanSkill(files: readonly ScannedFile[]): Promise<ScanFinding[]> {
  const slices = eventLoopSlices();
  const findings: ScanFinding[] = [];
  for (const file of files) {
    if (file.text === undefined) continue;
    const perRule = new Map<string, number>();
    const add = (f: ScanFinding) => {
      const n = perRule.get(f.rule) ?? 0;
      perRule.set(f.rule, n + 1);
      if (n < maxFindingsPerRule) findings.push(f);
    };
    let lineNo = 0;
    let start = 0;
    while (start <= file.text.length) {
      const end = file.text.indexOf("\n", start);
      const stop = end === -1 ? file.text.length : end;
      lineNo++;
      await scanLine(file.path, lineNo, file.text.slice(start, stop), add, slices);
      if (end === -1) break;
      start = end + 1;
    }
  }
  const rank = { critical: 0, warning: 1, info: 2 } as const;
  const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return findings.sort((a, b) => rank[a.severity] - rank[b.severity] || byPath(a.file, b.file) || a.line - b.line);
}

export const hasCritical = (findings: readonly ScanFinding[]) => findings.some((f) => f.severity === "critical");
