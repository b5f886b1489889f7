import { readFile } from "node:fs/promises";

// The LoCoMo long-conversation benchmark, read for evaluation only (CC BY-NC 4.0: never copied into the
// repository). Shape: see /work/shared/data/locomo/README.md.

export interface Turn {
  /** "D<session>:<turn>". */
  diaId: string;
  session: number;
  speaker: string;
  text: string;
  caption: string | undefined;
  /** ISO 8601 date of the session, when its date parses. */
  date: string | undefined;
}

export interface Question {
  question: string;
  category: number;
  /** Evidence dia_ids that exist in the conversation, normalised ("D30:05" -> "D30:5"). */
  evidence: string[];
}

export interface Conversation {
  index: number;
  sampleId: string;
  turns: Turn[];
  questions: Question[];
}

interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

interface RawSample {
  sample_id?: string;
  conversation: Record<string, unknown>;
  qa: Array<{ question: string; category: number; evidence: string[] }>;
}

const months = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];

/** "1:56 pm on 8 May, 2023" -> "2023-05-08T13:56:00.000Z"; undefined when it does not parse. */
export function parseSessionDate(text: unknown): string | undefined {
  if (typeof text !== "string") return undefined;
  const m = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})\s*$/i.exec(text);
  if (!m) return undefined;
  const month = months.indexOf(m[5]!.toLowerCase());
  if (month < 0) return undefined;
  const hour = (Number(m[1]) % 12) + (m[3]!.toLowerCase() === "pm" ? 12 : 0);
  const date = new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2])));
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** Evidence strings to dia_ids; tolerates the malformed ones ("D8:6; D9:17", "D:11:26", "D30:05"). */
export function parseEvidence(evidence: readonly string[]): string[] {
  const ids = new Set<string>();
  for (const e of evidence) for (const m of e.matchAll(/D:?(\d+):(\d+)/g)) ids.add(`D${Number(m[1])}:${Number(m[2])}`);
  return [...ids];
}

const normalisedDiaId = (id: string) => parseEvidence([id])[0] ?? id;

export async function loadLocomo(file: string): Promise<Conversation[]> {
  const samples = JSON.parse(await readFile(file, "utf8")) as RawSample[];
  return samples.map((sample, index) => {
    const c = sample.conversation;
    const sessions = Object.keys(c)
      .map((k) => /^session_(\d+)$/.exec(k))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    const turns = sessions.flatMap((s) => {
      const date = parseSessionDate(c[`session_${s}_date_time`]);
      return (c[`session_${s}`] as RawTurn[]).map(
        (t): Turn => ({
          diaId: normalisedDiaId(t.dia_id),
          session: s,
          speaker: t.speaker,
          text: t.text,
          caption: t.blip_caption || undefined,
          date,
        }),
      );
    });
    const known = new Set(turns.map((t) => t.diaId));
    const questions = sample.qa.map(
      (q): Question => ({
        question: q.question,
        category: q.category,
        evidence: parseEvidence(q.evidence).filter((id) => known.has(id)),
      }),
    );
    return { index, sampleId: sample.sample_id ?? `conv-${index}`, turns, questions };
  });
}

export type ContentVariant = "speaker" | "text";

/** The memory text of a turn: "<speaker>: <text>" or the text alone, with the image caption appended. */
export function turnContent(t: Turn, variant: ContentVariant): string {
  const body = variant === "speaker" ? `${t.speaker}: ${t.text}` : t.text;
  return t.caption ? `${body} [image: ${t.caption}]` : body;
}

// ---- Retrieval metrics -------------------------------------------------------------------------------

export interface Judged {
  category: number;
  evidence: string[];
  /** Ranked dia_ids returned for the question (limit 10). */
  top: string[];
  /** Ranked dia_ids of a limit-50 recall, for any@50; absent when not measured. */
  top50?: string[];
}

export interface Metrics {
  n: number;
  any1: number;
  any5: number;
  any10: number;
  any50: number | null;
  frac5: number;
  frac10: number;
  /** Mean reciprocal rank of the first evidence turn within the top 10 (0 when none is there). */
  mrr10: number;
}

const anyAt = (top: string[], evidence: Set<string>, k: number) => (top.slice(0, k).some((id) => evidence.has(id)) ? 1 : 0);
const fracAt = (top: string[], evidence: Set<string>, k: number) =>
  top.slice(0, k).filter((id) => evidence.has(id)).length / evidence.size;

export function metricsOf(judged: readonly Judged[]): Metrics {
  const n = judged.length;
  const mean = (f: (j: Judged, ev: Set<string>) => number) =>
    n === 0 ? 0 : judged.reduce((sum, j) => sum + f(j, new Set(j.evidence)), 0) / n;
  const with50 = judged.every((j) => j.top50 !== undefined);
  return {
    n,
    any1: mean((j, ev) => anyAt(j.top, ev, 1)),
    any5: mean((j, ev) => anyAt(j.top, ev, 5)),
    any10: mean((j, ev) => anyAt(j.top, ev, 10)),
    any50: with50 && n > 0 ? mean((j, ev) => anyAt(j.top50!, ev, 50)) : null,
    frac5: mean((j, ev) => fracAt(j.top, ev, 5)),
    frac10: mean((j, ev) => fracAt(j.top, ev, 10)),
    mrr10: mean((j, ev) => {
      const rank = j.top.slice(0, 10).findIndex((id) => ev.has(id));
      return rank < 0 ? 0 : 1 / (rank + 1);
    }),
  };
}
