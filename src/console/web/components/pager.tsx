import { useState } from "preact/hooks";

/**
 * Keyset pages: the tokens of the pages seen so far, so "Previous" goes back without offsets. `reset` starts
 * again from the first page (when filters change).
 */
export function usePages() {
  const [tokens, setTokens] = useState<string[]>([""]);
  const token = tokens.at(-1)!;
  return {
    token,
    page: tokens.length,
    next: (t: string) => setTokens([...tokens, t]),
    previous: () => setTokens(tokens.slice(0, -1)),
    reset: () => setTokens([""]),
  };
}

export function Pager(p: { pages: ReturnType<typeof usePages>; nextToken: string | undefined; label: string }) {
  const { pages, nextToken } = p;
  return (
    <nav class="pager" aria-label={`${p.label} pages`}>
      <button type="button" disabled={pages.page === 1} onClick={pages.previous}>
        Previous page
      </button>
      <span>Page {pages.page}</span>
      <button type="button" disabled={!nextToken} onClick={() => nextToken && pages.next(nextToken)}>
        Next page
      </button>
    </nav>
  );
}
