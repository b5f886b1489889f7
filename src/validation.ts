import { z } from "zod";
import { apiError, invalidRequest } from "./errors/api-error.js";

// Shared field rules and the one bridge from zod to invalid_request.

/**
 * What a one-line field refuses: C0 controls (U+0000-U+001F: CR, LF, TAB, ...), DEL and the C1 controls
 * (U+007F-U+009F, NEL among them) and the Unicode line and paragraph separators (U+2028, U+2029). A name
 * or tag with a line break could forge lines wherever it is printed (a notice email, a log line).
 */
export const notOneLine = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

export const oneLineMessage = "must be one line: no control characters (U+0000-U+001F, U+007F-U+009F) or line separators (U+2028, U+2029)";

/** The refinement's parameters, fresh each time (zod writes into the object it is given). */
export const oneLineIssue = (message = oneLineMessage) => ({ message, params: { rule: "one_line" } });

/** A string rule that also refuses line breaks and other control characters (rule `one_line`). */
export const oneLine = <S extends z.ZodString>(rule: S) => rule.refine((s) => !notOneLine.test(s), oneLineIssue());

// Container and workspace names are one line already: their character sets hold no control character.
export const containerName = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,64}$/, "must be 1 to 64 characters from A-Z, a-z, 0-9 and . _ : -");

export const workspaceName = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, "must be 1 to 64 characters from A-Z, a-z, 0-9 and . _ -");

const isoDate = /^\d{4}-\d{2}-\d{2}$/;
const isoDateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** Parses an ISO 8601 date (midnight UTC) or a timestamp with a zone; null when it is neither. */
export function parseInstant(text: string): Date | null {
  if (!isoDate.test(text) && !isoDateTime.test(text)) return null;
  const ms = Date.parse(isoDate.test(text) ? `${text}T00:00:00Z` : text);
  return Number.isNaN(ms) ? null : new Date(ms);
}

export const isoInstant = z.string().transform((text, ctx) => {
  const date = parseInstant(text);
  if (date === null) {
    ctx.addIssue({ code: "custom", message: "must be an ISO 8601 date (2026-01-31) or timestamp with a zone (2026-01-31T09:30:00Z)", params: { rule: "iso8601" } });
    return z.NEVER;
  }
  return date;
});

/**
 * A creation-time window (after inclusive, before exclusive) that holds no instant is refused, not
 * answered empty: listing memories, recall and listing traces all take one.
 */
export function checkCreatedWindow(w: { createdAfter?: Date | undefined; createdBefore?: Date | undefined }): void {
  if (w.createdAfter && w.createdBefore && w.createdAfter >= w.createdBefore) {
    throw invalidRequest("createdBefore", "after_created_after", "must be after createdAfter");
  }
}

/** Joins a field path the way errors name fields: memories[3].tags[0]. */
export function fieldPath(path: readonly PropertyKey[], prefix = ""): string {
  let out = prefix;
  for (const part of path) {
    out += typeof part === "number" ? `[${part}]` : out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

function ruleOf(issue: z.core.$ZodIssue): string {
  const params = (issue as { params?: { rule?: string } }).params;
  if (params?.rule) return params.rule;
  if (issue.code === "too_small") return issue.origin === "array" ? "min_items" : issue.origin === "string" ? "min_length" : "min";
  if (issue.code === "too_big") return issue.origin === "array" ? "max_items" : issue.origin === "string" ? "max_length" : "max";
  if (issue.code === "invalid_format") return "format";
  if (issue.code === "invalid_value") return "enum";
  if (issue.code === "invalid_type") return issue.input === undefined ? "required" : "type";
  return issue.code;
}

/** Validates with a zod schema; the first problem becomes invalid_request naming the field and rule. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, prefix = ""): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = fieldPath(issue.path, prefix) || "body";
  throw apiError("invalid_request", `${field}: ${issue.message}`, { field, rule: ruleOf(issue) });
}
