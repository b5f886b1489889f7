import type { DescEnum, JsonObject } from "@bufbuild/protobuf";

// Formatting and parsing shared by the pages: enum names as the REST API spells them, times, numbers, lists.

export interface Option {
  value: number;
  label: string;
}

/** The values of an enum other than UNSPECIFIED, named as in REST (MEMORY_TYPE_FACT is "fact"). */
export const enumOptions = (desc: DescEnum): Option[] =>
  desc.values.filter((v) => v.number !== 0).map((v) => ({ value: v.number, label: v.localName.toLowerCase() }));

export const enumLabel = (desc: DescEnum, n: number | undefined): string =>
  desc.values.find((v) => v.number === n && n !== 0)?.localName.toLowerCase() ?? "—";

/** An ISO 8601 instant as "2026-11-23 06:42:10 UTC" (the API's clock, whatever the browser's zone). */
export const when = (iso: string | undefined): string => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : "—");

export const num = (n: number, digits = 3): string => (Number.isInteger(n) ? n.toLocaleString("en") : n.toFixed(digits));

/** "a, b ,c" → ["a", "b", "c"]. */
export const splitList = (text: string): string[] =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

export class InputError extends Error {}

/** A JSON object typed by the user; empty text is undefined. */
export function parseJsonObject(text: string, label: string): JsonObject | undefined {
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InputError(`${label} is not valid JSON`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InputError(`${label} must be a JSON object`);
  return value as JsonObject;
}

/** A datetime-local input's value (the browser's zone) as an ISO 8601 instant; empty is undefined. */
export const isoFromLocal = (value: string): string | undefined => (value ? new Date(value).toISOString() : undefined);

/** An optional number input; empty is undefined. */
export function optionalNumber(text: string, label: string): number | undefined {
  if (text.trim() === "") return undefined;
  const n = Number(text);
  if (!Number.isFinite(n)) throw new InputError(`${label} must be a number`);
  return n;
}

export const pretty = (value: unknown): string => JSON.stringify(value, null, 2);
