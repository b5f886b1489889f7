import { assessPair, type PairAssessment } from "./rules.js";
import type { Statement } from "./statement.js";

/** One memory of a write, as the detector sees it. */
export interface Subject {
  content: string;
  containers: readonly string[];
  statement: Statement;
}

/**
 * How one memory of a batch bears on every earlier one sharing a container (updates, near misses and
 * doubts; pairs about different things are left out). A batch is checked a newer memory at a time (each
 * later one against every earlier one), so the caller can let other work run between them: a batch of
 * 100 is 4,950 pairs. `similarity` gives two memories' cosine by their indexes; each result carries it.
 */
export function assessWithEarlier(
  subjects: readonly Subject[],
  newer: number,
  similarity: (older: number, newer: number) => number,
): Array<{ older: number; similarity: number; assessment: PairAssessment }> {
  const found: Array<{ older: number; similarity: number; assessment: PairAssessment }> = [];
  const subject = subjects[newer]!;
  for (let i = 0; i < newer; i++) {
    const older = subjects[i]!;
    if (!older.containers.some((c) => subject.containers.includes(c))) continue;
    const cosine = similarity(i, newer);
    const assessment = assessPair(older.statement, subject.statement, cosine);
    if (assessment) found.push({ older: i, similarity: cosine, assessment });
  }
  return found;
}
