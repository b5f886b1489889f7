/** Rows of cells as an aligned text table: the first row is the header; columns in `left` align left, the rest right. */
export function alignedTable(rows: string[][], left: readonly number[] = [0]): string {
  const columns = Math.max(...rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  const line = (row: string[]) =>
    widths
      .map((w, c) => (left.includes(c) ? (row[c] ?? "").padEnd(w) : (row[c] ?? "").padStart(w)))
      .join("  ")
      .trimEnd();
  return [line(rows[0]!), line(widths.map((w) => "-".repeat(w))), ...rows.slice(1).map(line)].join("\n");
}
