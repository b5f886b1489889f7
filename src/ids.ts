import { monotonicFactory } from "ulid";

const nextUlid = monotonicFactory();

export type IdPrefix = "mem" | "key" | "ws" | "skl" | "trc" | "rpt" | "apl" | "mod" | "eml";

/** The one id scheme: `<prefix>_<ulid>`, lower case, sortable by creation time. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

const idPattern = /^[a-z]+_[0-9a-hjkmnp-tv-z]{26}$/;

export function isId(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && idPattern.test(value);
}
