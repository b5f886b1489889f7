/**
 * A Map capped at `maxBytes` by the size `sizeOf` estimates for each entry, evicting the least recently
 * used; Map iteration order is the recency order. An entry larger than the whole cap is not kept.
 * Entries vary a hundredfold in size (a query of 10 characters, a memory of 16,384), so a cap by count
 * bounds nothing.
 */
export class ByteLru<K, V> {
  private readonly entries = new Map<K, { value: V; bytes: number }>();
  private total = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly sizeOf: (key: K, value: V) => number,
  ) {}

  /** Estimated bytes held, at most maxBytes. */
  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const bytes = this.sizeOf(key, value);
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { value, bytes });
    this.total += bytes;
    for (const oldest of this.entries.keys()) {
      if (this.total <= this.maxBytes) break;
      this.delete(oldest);
    }
  }

  delete(key: K): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.total -= entry.bytes;
  }

  /** Removes the key if it still maps to `value`. */
  deleteIf(key: K, value: V): void {
    if (this.entries.get(key)?.value === value) this.delete(key);
  }

  /** Removes every entry whose value matches. */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.delete(key);
  }
}

// What V8 keeps per cached entry beyond its own bytes: the Map slot, the entry record, a typed array's
// object or a promise (measured with --expose-gc: about 200 bytes an entry for a vector cache).
export const entryOverheadBytes = 256;

/** Bytes a string may take on the heap: two per UTF-16 unit (V8 stores Latin-1 text in one). */
export const stringBytes = (s: string): number => 2 * s.length;
