import { compareStatements, type Verdict } from "./rules.js";
import type { Statement } from "./statement.js";

/** One memory of a write, as the detector sees it. */
export interface Subject {
  content: string;
  containers: readonly string[];
  statement: Statement;
}

/** Contradictions between memories of one batch: each later one against every earlier one sharing a container. */
export function batchContradictions(subjects: readonly Subject[]): Array<{ older: number; newer: number; verdict: Verdict }> {
  const found: Array<{ older: number; newer: number; verdict: Verdict }> = [];
  subjects.forEach((newer, j) => {
    for (let i = 0; i < j; i++) {
      const older = subjects[i]!;
      if (!older.containers.some((c) => newer.containers.includes(c))) continue;
      const verdict = compareStatements(older.statement, newer.statement);
      if (verdict) found.push({ older: i, newer: j, verdict });
    }
  });
  return found;
}
