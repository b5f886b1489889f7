import { createHash } from "node:crypto";

// The digest of a published skill version: SHA-256 over a canonical form of its exported SKILL.md and
// bundled files, so anyone holding the exported directory can recompute it. The form is specified in
// docs/reference/skill-digest.md; changing it changes every digest, hence the version tag.

export const digestFormTag = "agentmem-skill-digest-v1\n";

/** One file of the exported directory: SKILL.md or a bundled file, with / separated path. */
export interface DigestEntry {
  path: string;
  bytes: Uint8Array;
}

/** Hex SHA-256 of the canonical form: the tag, then per file in byte order of the UTF-8 path: path, length, bytes. */
export function skillDigest(entries: readonly DigestEntry[]): string {
  const sorted = entries.map((e) => ({ path: Buffer.from(e.path, "utf8"), bytes: e.bytes })).sort((a, b) => Buffer.compare(a.path, b.path));
  const hash = createHash("sha256").update(digestFormTag);
  for (const e of sorted) {
    hash.update(e.path).update(`\n${e.bytes.byteLength}\n`).update(e.bytes).update("\n");
  }
  return hash.digest("hex");
}
