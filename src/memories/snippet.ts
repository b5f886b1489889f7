const snippetChars = 160;

/** An excerpt of a memory's content for contradictions and supersedes entries: at most 160 characters. */
export const snippet = (content: string): string =>
  content.length <= snippetChars ? content : `${content.slice(0, snippetChars - 1).trimEnd()}…`;
