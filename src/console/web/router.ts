import { useEffect, useState } from "preact/hooks";

// Hash routes (#/memories/mem_…): the server serves one page, and no route ever holds the key.

export interface Route {
  /** The path's segments: #/skills/skl_1 is ["skills", "skl_1"]. */
  parts: string[];
}

const parse = (): Route => ({
  parts: window.location.hash
    .replace(/^#\/?/, "")
    .split("/")
    .filter((p) => p !== "")
    .map(decodeURIComponent),
});

export const href = (...parts: string[]): string => `#/${parts.map(encodeURIComponent).join("/")}`;

export function navigate(...parts: string[]): void {
  window.location.hash = href(...parts);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(parse);
  useEffect(() => {
    const onChange = () => setRoute(parse());
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  return route;
}
