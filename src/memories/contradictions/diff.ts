/** A run of tokens that differs between two sequences: removed from the first, added in the second. */
export interface Hunk {
  /** Index in the first sequence where the hunk starts. */
  aStart: number;
  bStart: number;
  removed: number[];
  added: number[];
}

/**
 * Most cells of the LCS table one diff may fill (after the common prefix, which is matched first). The
 * table is quadratic in the sequences' length; statements are sentences, so beyond this (two differing
 * tails of 100+ tokens each) the rest is reported as one hunk: enough to tell it is no one-slot change.
 */
export const maxDiffCells = 10_000;

/** The hunks between two token sequences, from their longest common subsequence. */
export function diffHunks(a: readonly string[], b: readonly string[]): Hunk[] {
  const n = a.length;
  const m = b.length;
  // The tail walk below matches equal tokens first, so a common prefix never needs the table.
  let prefix = 0;
  while (prefix < n && prefix < m && a[prefix] === b[prefix]) prefix++;
  if ((n - prefix) * (m - prefix) > maxDiffCells) {
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);
    return [{ aStart: prefix, bStart: prefix, removed: range(prefix, n), added: range(prefix, m) }];
  }
  // lcs[i][j]: length of the LCS of a[i..] and b[j..] (rows and columns before the prefix stay unused).
  const lcs = Array.from({ length: n + 1 }, (_, i) => new Array<number>(i < prefix ? 0 : m + 1).fill(0));
  for (let i = n - 1; i >= prefix; i--) {
    for (let j = m - 1; j >= prefix; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const hunks: Hunk[] = [];
  let open: Hunk | undefined;
  let i = prefix;
  let j = prefix;
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
