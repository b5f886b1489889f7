import type { EmailDraft } from "./email-outbox.js";

// The author notices (pure): plain text, naming the skill, what happened and what the author can do.
// What users and moderators wrote is quoted, so no stored value can forge a line of the notice: a name
// (one line, even if stored before names refused line breaks) in JSON-style quotes with every control
// character and line separator escaped; free text (details, notes) as a block of "> " lines.

const escapable = /[\u0000-\u001f\u007f-\u009f\u2028\u2029"\\]/g;
const escapes: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };
const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** A one-line value in double quotes, its quotes, backslashes, control characters and line separators escaped. */
export const quoted = (text: string): string => `"${text.replace(escapable, (c) => escapes[c] ?? unicodeEscape(c))}"`;

const lineBreak = /\r\n|[\n\r\u000b\u000c\u0085\u2028\u2029]/;
const otherControl = /[\u0000-\u0008\u000e-\u001f\u007f-\u0084\u0086-\u009f]/g;

/** Free text as quoted lines ("> ..."), other control characters escaped. */
export const quotedBlock = (text: string): string[] => text.split(lineBreak).map((line) => `> ${line.replace(otherControl, unicodeEscape)}`.trimEnd());

export interface NoticeSkill {
  id: string;
  slug: string;
  name: string;
  authorHandle: string;
}

const skillLine = (s: NoticeSkill) => `${quoted(s.name)} (${s.authorHandle}/${s.slug}, id ${s.id})`;

/** How to appeal, exactly: the route, its body and the MCP tool. */
export function appealInstructions(skillId: string): string {
  return [
    "To appeal, send (with an API key of your workspace):",
    "",
    "  POST /api/v1/agent/marketplace/appeal",
    `  {"id": "${skillId}", "message": "<why the takedown should be reversed>"}`,
    "",
    `or call the MCP tool skill_appeal with {"id": "${skillId}", "message": "..."}.`,
    "One appeal per workspace can be pending at a time, and at most 5 can be sent in 24 hours.",
  ].join("\n");
}

export function takedownEmail(to: string, skill: NoticeSkill, reason: string, details: string | null): EmailDraft {
  return {
    to,
    kind: "takedown",
    skillId: skill.id,
    subject: `Your skill ${skill.authorHandle}/${skill.slug} was removed from the marketplace`,
    body: [
      `Your skill ${skillLine(skill)} was removed from the marketplace by a moderator.`,
      "",
      `Reason: ${reason}`,
      ...(details ? ["Details:", ...quotedBlock(details)] : []),
      "",
      "It no longer appears in marketplace search and cannot be read, installed or forked there. Copies",
      "already installed and forks already made keep working.",
      "",
      appealInstructions(skill.id),
      "",
    ].join("\n"),
  };
}

export function appealDecisionEmail(to: string, skill: NoticeSkill, granted: boolean, note: string | null): EmailDraft {
  return {
    to,
    kind: granted ? "appeal_granted" : "appeal_denied",
    skillId: skill.id,
    subject: `Your appeal for ${skill.authorHandle}/${skill.slug} was ${granted ? "granted" : "denied"}`,
    body: [
      `Your appeal of the takedown of ${skillLine(skill)} was ${granted ? "granted" : "denied"}.`,
      "",
      granted
        ? "The skill is listed in the marketplace again: it can be found, installed and forked."
        : "The skill stays removed from the marketplace. You may appeal again later (at most 5 appeals in 24 hours).",
      ...(note ? ["", "Moderator's note:", ...quotedBlock(note)] : []),
      ...(granted ? [] : ["", appealInstructions(skill.id)]),
      "",
    ].join("\n"),
  };
}
