// The bytes LanceDB's cache sessions hold, for /metrics. Apart from lance-session.ts so that reading it
// does not load the native module (a pgvector server never does).
const readers = new Set<() => number>();

export function meterLanceCache(read: () => number): void {
  readers.add(read);
}

export const lanceCacheBytes = (): number => [...readers].reduce((sum, read) => sum + read(), 0);
