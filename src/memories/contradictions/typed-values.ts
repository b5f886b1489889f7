// Values whose form says which attribute they are: an email address, a phone number, a street address, a
// web address. A person or a thing has one of each in use (a second one comes with "also", "work" or
// "personal", which the rules check), so a newer statement that says a change and gives another value of
// the same form replaces the older one, however each sentence is phrased ("Contact address for Jonah:
// jonah.r@acme.io" → "Jonah's email changed to jonah.reyes@acme.io"). Pure.

export type ValueForm = "email" | "phone" | "street address" | "web address";

export interface TypedValue {
  form: ValueForm;
  /** As written. */
  text: string;
  /** Letters and digits only, lower case: one value written two ways is one key. */
  key: string;
}

const forms: Array<[ValueForm, RegExp]> = [
  ["email", /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g],
  ["web address", /\bhttps?:\/\/[^\s,;]+/g],
  // A house number, one to three capitalised words and the kind of street.
  ["street address", /\b\d{1,5}[A-Za-z]?\s+(?:\p{Lu}\p{L}+\s+){1,3}(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Drive|Dr|Boulevard|Blvd|Way|Court|Ct|Place|Pl|Terrace|Crescent|Square|Sq)\b/gu],
  // Seven digits or more in groups, perhaps after a country code: "+44 7700 900123", "(555) 010-4477".
  ["phone", /(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,5}\)[\s.-]?)?\d{2,5}(?:[\s.-]\d{2,5}){1,4}/g],
];

const digits = (s: string) => s.replace(/\D/g, "").length;
/** Years and times look like digit groups: "2025-2026", "9:30". A phone number has seven digits or more. */
const phoneLike = (s: string) => digits(s) >= 7 && !/^(19|20)\d\d[\s.-](19|20)?\d\d$/.test(s.trim());

/** The typed values in a text (at most 400 characters are read), each form's matches once. */
export function typedValuesOf(text: string): TypedValue[] {
  if (text.length > 400) return [];
  const found: TypedValue[] = [];
  let rest = text;
  for (const [form, pattern] of forms) {
    for (const m of rest.matchAll(pattern)) {
      const value = m[0].replace(/[.,;:]+$/, "");
      if (form === "phone" && !phoneLike(value)) continue;
      found.push({ form, text: value, key: value.toLowerCase().replace(/[^\p{L}\p{N}@]/gu, "") });
    }
    // An email's or a web address's digits are no phone number.
    rest = rest.replace(pattern, " ");
  }
  return found;
}

/** The one value of a form a text gives, or null when it gives none or several. */
export function onlyValueOf(values: readonly TypedValue[], form: ValueForm): TypedValue | null {
  const of = values.filter((v) => v.form === form);
  return of.length === 1 ? of[0]! : null;
}
