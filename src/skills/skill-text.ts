// What a skill is found by. Measured on the dev split of bench/data/skills as it was then (35 skills, 68
// queries; README, Skills, has the current set): the name and
// description alone put the right skill first for 0.20 of task phrasings; adding the body's "When to use"
// section to the embedded text raised that to 0.39, and BM25 over the whole skill fused with it to 0.71.
// The first 600 characters of the body, embedded instead, lowered it.

/** Characters of the "When to use" section embedded with the name and description. */
export const whenToUseChars = 600;

/** Characters of the body that keyword search covers; a Postgres tsvector must stay under 1 MB. */
export const keywordBodyChars = 65_536;

const whenToUseHeading = /^(#{1,6})\s+when\s+(to|should\s+I|do\s+I)\s+use\b/i;
const heading = /^(#{1,6})\s/;

/**
 * The body's "When to use" section (up to the next heading of the same or a higher level), without
 * Markdown marks, at most whenToUseChars; "" when the body has none. One pass over the lines.
 */
export function whenToUseSection(content: string): string {
  let level = 0;
  let text = "";
  for (let start = 0; start < content.length && text.length < whenToUseChars; ) {
    const end = content.indexOf("\n", start);
    const line = content.slice(start, end === -1 ? content.length : end);
    start = end === -1 ? content.length : end + 1;
    const h = heading.exec(line);
    if (level === 0) {
      const found = whenToUseHeading.exec(line);
      if (found) level = found[1]!.length;
    } else if (h && h[1]!.length <= level) {
      break;
    } else {
      const plain = line.replace(/[#*_`>|]+|^\s*([-+]|\d+[.)])\s+/g, " ").replace(/\s+/g, " ").trim();
      if (plain !== "") text += (text === "" ? "" : " ") + plain;
    }
  }
  return text.slice(0, whenToUseChars);
}

/** The text whose embedding semantic search compares: name, description and the "When to use" section. */
export function embeddedText(s: { name: string; description: string; content: string }): string {
  const when = whenToUseSection(s.content);
  return when === "" ? `${s.name}\n${s.description}` : `${s.name}\n${s.description}\n${when}`;
}

/** The text keyword search matches: the name, the description and the start of the body. */
export const keywordText = (s: { name: string; description: string; content: string }): string =>
  `${s.name}\n${s.description}\n${s.content.slice(0, keywordBodyChars)}`;
