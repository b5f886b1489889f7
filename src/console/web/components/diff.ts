// A word diff between two versions of a memory's content, for the version view. Common prefix and suffix
// are taken off first (edits are usually small); the rest is compared by longest common subsequence
// when small enough, and otherwise shown as removed then added.

export interface DiffPart {
  kind: "same" | "removed" | "added";
  text: string;
}

const maxCells = 2_000_000;

const tokens = (s: string): string[] => s.split(/(\s+)/).filter((t) => t !== "");

function merge(parts: DiffPart[]): DiffPart[] {
  const out: DiffPart[] = [];
  for (const p of parts) {
    const last = out.at(-1);
    if (last && last.kind === p.kind) last.text += p.text;
    else out.push({ ...p });
  }
  return out;
}

export function wordDiff(before: string, after: string): DiffPart[] {
  const a = tokens(before);
  const b = tokens(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const head: DiffPart[] = [{ kind: "same", text: a.slice(0, start).join("") }];
  const tail: DiffPart[] = [{ kind: "same", text: a.slice(endA).join("") }];
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const n = midA.length;
  const m = midB.length;
  if ((n + 1) * (m + 1) > maxCells) {
    return merge([...head, { kind: "removed", text: midA.join("") }, { kind: "added", text: midB.join("") }, ...tail]).filter((p) => p.text !== "");
  }
  // lcs[i][j]: the longest common subsequence of midA[i..] and midB[j..].
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] = midA[i] === midB[j] ? lcs[(i + 1) * width + j + 1]! + 1 : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  const middle: DiffPart[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (midA[i] === midB[j]) {
      middle.push({ kind: "same", text: midA[i++]! });
      j++;
    } else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) middle.push({ kind: "removed", text: midA[i++]! });
    else middle.push({ kind: "added", text: midB[j++]! });
  }
  while (i < n) middle.push({ kind: "removed", text: midA[i++]! });
  while (j < m) middle.push({ kind: "added", text: midB[j++]! });
  return merge([...head, ...middle, ...tail]).filter((p) => p.text !== "");
}
