import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { root } from "./markdown.js";

// The repository speaks of the code as it is, not of the project's own past: no numbered work periods or
// tracker entries a reader cannot look up. A figure keeps its date and machine instead; measurement logs
// live on one dated page under docs/benchmarks/.
const historyReference = String.raw`\bsessions? [0-9]+|\bissues? #?[0-9]{1,2}\b`;

/** The tracked (and staged) files' lines that match, as `path:line:text`; none when nothing does. */
function matches(pattern: string): string[] {
  try {
    return execFileSync("git", ["grep", "-niE", pattern], { cwd: root, encoding: "utf8" }).trim().split("\n");
  } catch (err) {
    if ((err as { status?: number }).status === 1) return []; // git grep: no match
    throw err;
  }
}

describe("no project history in the repository", () => {
  it("has no line that names a numbered session or issue", () => {
    expect(matches(historyReference)).toEqual([]);
  });
});
