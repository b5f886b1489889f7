/** A run of tokens that differs between two sequences: removed from the first, added in the second. */
export interface Hunk {
  /** Index in the first sequence where the hunk starts. */
  aStart: number;
  bStart: number;
  removed: number[];
  added: number[];
}

/** The hunks between two token sequences, from their longest common subsequence. */
export function diffHunks(a: readonly string[], b: readonly string[]): Hunk[] {
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: length of the LCS of a[i..] and b[j..].
  const lcs = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const hunks: Hunk[] = [];
  let open: Hunk | undefined;
  let i = 0;
  let j = 0;
  const current = () => (open ??= { aStart: i, bStart: j, removed: [], added: [] });
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      if (open) hunks.push(open);
      open = undefined;
      i++;
      j++;
    } else if (j < m && (i === n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      current().added.push(j++);
    } else {
      current().removed.push(i++);
    }
  }
  if (open) hunks.push(open);
  return hunks;
}
