import { randomFillSync } from "node:crypto";
import { monotonicFactory } from "ulid";

// ulid's default draws each of an id's 16 random characters with a getRandomValues call of its own
// (0.17 ms an id in a profile of recalls, which make one each); a pool of random bytes refilled 4 KiB at
// a time serves them. A byte over 256 picks one of the 32 characters uniformly.
const pool = Buffer.alloc(4096);
let used = pool.length;
function pooledRandom(): number {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return pool[used++]! / 256;
}

const nextUlid = monotonicFactory(pooledRandom);

export type IdPrefix = "mem" | "key" | "ws" | "skl" | "trc" | "rpt" | "apl" | "mod" | "eml";

/** The one id scheme: `<prefix>_<ulid>`, lower case, sortable by creation time. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

const idPattern = /^[a-z]+_[0-9a-hjkmnp-tv-z]{26}$/;

export function isId(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && idPattern.test(value);
}
