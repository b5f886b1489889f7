// A unified diff of two texts by lines (Myers' O((N+M)D) algorithm). Bounded: past maxEdits edits the
// diff gives up on alignment and shows the old text removed and the new one added, so a diff of two
// unrelated 256 KiB bodies costs no more than a few million steps.

const maxEdits = 1000;
const context = 3;

type Op = { kind: " " | "-" | "+"; line: string; a: number; b: number };

const linesOf = (text: string) => (text === "" ? [] : text.replace(/\n$/, "").split("\n"));

/** The edit script from a to b; undefined past maxEdits. */
function myers(a: string[], b: string[]): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const offset = maxEdits + 1;
  const v = new Int32Array(2 * offset + 1);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= Math.min(n + m, maxEdits); d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace, d, offset);
    }
  }
  return undefined;
}

function backtrack(a: string[], b: string[], trace: Int32Array[], dEnd: number, offset: number): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = dEnd; d > 0; d--) {
    const v = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? k + 1 : k - 1;
    const prevX = v[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) ops.push({ kind: " ", line: a[--x]!, a: x, b: --y });
    if (x === prevX) ops.push({ kind: "+", line: b[--y]!, a: x, b: y });
    else ops.push({ kind: "-", line: a[--x]!, a: x, b: y });
  }
  while (x > 0 && y > 0) ops.push({ kind: " ", line: a[--x]!, a: x, b: --y });
  return ops.reverse();
}

/** `--- a/path` / `+++ b/path` and its hunks; "" when the texts are equal. */
export function unifiedDiff(path: string, before: string, after: string): string {
  if (before === after) return "";
  const a = linesOf(before);
  const b = linesOf(after);
  const ops = myers(a, b) ?? [...a.map((line, i): Op => ({ kind: "-", line, a: i, b: 0 })), ...b.map((line, i): Op => ({ kind: "+", line, a: a.length, b: i }))];
  const out = [`--- ${before === "" ? "/dev/null" : `a/${path}`}`, `+++ ${after === "" ? "/dev/null" : `b/${path}`}`];
  let i = 0;
  while (i < ops.length) {
    if (ops[i]!.kind === " ") {
      i++;
      continue;
    }
    const start = Math.max(0, i - context);
    let end = i;
    // Extend the hunk while the next change is within two contexts of the last one.
    for (let j = i; j < ops.length; j++) {
      if (ops[j]!.kind !== " ") end = j;
      else if (j - end > 2 * context) break;
    }
    const stop = Math.min(ops.length, end + context + 1);
    const hunk = ops.slice(start, stop);
    const aLines = hunk.filter((o) => o.kind !== "+").length;
    const bLines = hunk.filter((o) => o.kind !== "-").length;
    const aStart = aLines === 0 ? hunk[0]!.a : hunk[0]!.a + 1;
    const bStart = bLines === 0 ? hunk[0]!.b : hunk[0]!.b + 1;
    out.push(`@@ -${aStart},${aLines} +${bStart},${bLines} @@`, ...hunk.map((o) => `${o.kind}${o.line}`));
    i = stop;
  }
  return `${out.join("\n")}\n`;
}
