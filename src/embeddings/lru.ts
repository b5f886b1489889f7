/** A Map bounded to `size` entries that evicts the least recently used; Map iteration order is the recency order. */
export class Lru<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly size: number) {}

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.size) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Removes the key if it still maps to `value`. */
  deleteIf(key: K, value: V): void {
    if (this.entries.get(key) === value) this.entries.delete(key);
  }
}
