/**
 * What a skill is found by: its name and description, the part that says when to use it. Measured in
 * bench/skill-search.ts: adding the body's start lowered hit@1 (see README, Skills).
 */
export const embeddedText = (s: { name: string; description: string }): string => `${s.name}\n${s.description}`;
