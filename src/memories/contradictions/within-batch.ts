import { compareStatements, type Verdict } from "./rules.js";
import type { Statement } from "./statement.js";

/** One memory of a write, as the detector sees it. */
export interface Subject {
  content: string;
  containers: readonly string[];
  statement: Statement;
}

/**
 * Contradictions between one memory of a batch and every earlier one sharing a container. A batch is
 * checked a newer memory at a time (each later one against every earlier one), so the caller can let
 * other work run between them: a batch of 100 is 4,950 pairs.
 */
export function contradictionsWithEarlier(subjects: readonly Subject[], newer: number): Array<{ older: number; verdict: Verdict }> {
  const found: Array<{ older: number; verdict: Verdict }> = [];
  const subject = subjects[newer]!;
  for (let i = 0; i < newer; i++) {
    const older = subjects[i]!;
    if (!older.containers.some((c) => subject.containers.includes(c))) continue;
    const verdict = compareStatements(older.statement, subject.statement);
    if (verdict) found.push({ older: i, verdict });
  }
  return found;
}
