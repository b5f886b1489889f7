import { ByteLru, entryOverheadBytes, stringBytes } from "../../embeddings/lru.js";

/**
 * Filters whose last search through an IVF index came back far short (then asked again exactly): a
 * container of a few hundred memories in a table of 100k, a rare tag. Their next searches go to the exact
 * pass at once instead of paying the probes first. A filter is forgotten after `searches` such searches
 * or `ttlMs`, whichever comes first, and is then probed again: a container that has grown since goes back
 * to the probes after at most that many exact passes. At most `maxBytes` of entries are kept.
 */
export function selectiveFilters({ searches = 32, ttlMs = 60_000, maxBytes = 256 * 1024 } = {}) {
  const entries = new ByteLru<string, { left: number; until: number }>(maxBytes, (key) => entryOverheadBytes + stringBytes(key));
  return {
    /** Whether `key` came back short lately; counts one search against it. */
    take(key: string, now = performance.now()): boolean {
      const entry = entries.get(key);
      if (!entry) return false;
      if (entry.left <= 0 || entry.until <= now) {
        entries.delete(key);
        return false;
      }
      entry.left--;
      return true;
    },
    remember(key: string, now = performance.now()): void {
      entries.set(key, { left: searches, until: now + ttlMs });
    },
  };
}
