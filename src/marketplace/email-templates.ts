import type { EmailDraft } from "./email-outbox.js";

// The author notices (pure): plain text, naming the skill, what happened and what the author can do.

export interface NoticeSkill {
  id: string;
  slug: string;
  name: string;
  authorHandle: string;
}

const skillLine = (s: NoticeSkill) => `"${s.name}" (${s.authorHandle}/${s.slug}, id ${s.id})`;

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
      ...(details ? [`Details: ${details}`] : []),
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
      ...(note ? ["", `Moderator's note: ${note}`] : []),
      ...(granted ? [] : ["", appealInstructions(skill.id)]),
      "",
    ].join("\n"),
  };
}
