import type { Table } from "@lancedb/lancedb";
import type { Table as ArrowTable } from "apache-arrow";
import { ByteLru, entryOverheadBytes, stringBytes } from "../../embeddings/lru.js";

/** Bytes of ids a collection's handle holds from its last full read: about 1.7 million 30-character ids. */
export const defaultRowIdsBytes = 64 * 2 ** 20;
/** Bytes of ids taken since (rows written or moved after that read), least recently used out. */
const takenIdsBytes = 2 ** 20;

/** A search's rows arrive with their row addresses (`_rowid`) instead of their `id` column. */
export type AddressedSearch = (byAddress: boolean) => Promise<ArrowTable>;

/**
 * The ids of a run of one fragment's rows as one batch of a fill held them, in three arrays of exactly
 * their size (a million rows are a few hundred objects for the garbage collector, and nothing is grown
 * and copied): row offsets ascending, and each row's id as Latin-1 bytes.
 */
interface Segment {
  offsets: Uint32Array;
  /** Where row i's id starts in `text`; it ends where row i + 1's starts. */
  starts: Uint32Array;
  text: Buffer;
}

/** Row addresses as pairs of 32-bit words, little-endian: each row's offset, then its fragment. */
const addressWords = (addresses: BigUint64Array) => new Uint32Array(addresses.buffer, addresses.byteOffset, 2 * addresses.length);

/** The index of the last element of ascending `values` that is at most `value`, or -1. */
function lastAtMost(values: ArrayLike<number>, value: number): number {
  let lo = 0;
  let hi = values.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! <= value) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi;
}

/** A fragment's segments in offset order, with the first offset of each. */
interface FragmentIds {
  firsts: number[];
  segments: Segment[];
}

function idAt(fragments: ReadonlyMap<number, FragmentIds>, fragment: number, offset: number): string | undefined {
  const f = fragments.get(fragment);
  if (!f) return undefined;
  const segment = f.segments[lastAtMost(f.firsts, offset)];
  if (!segment) return undefined;
  const row = lastAtMost(segment.offsets, offset);
  if (row < 0 || segment.offsets[row] !== offset) return undefined;
  return segment.text.toString("latin1", segment.starts[row]!, segment.starts[row + 1]!);
}

/** Printable ASCII: ids are (`src/ids.ts`), and such bytes read back as the same string. */
function printable(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i]! < 0x20 || bytes[i]! > 0x7e) return false;
  return true;
}

/**
 * The segment of rows [from, to) of a batch (all of one fragment), without ids that are not printable;
 * undefined if their offsets do not ascend (LanceDB scans a fragment in offset order).
 */
function segmentOf(words: Uint32Array, ends: ArrayLike<number | bigint>, bytes: Uint8Array, from: number, to: number): Segment | undefined {
  const kept: number[] = [];
  let textBytes = 0;
  for (let row = from; row < to; row++) {
    if (kept.length > 0 && words[2 * row]! <= words[2 * kept[kept.length - 1]!]!) return undefined;
    const start = Number(ends[row]);
    const end = Number(ends[row + 1]);
    if (!printable(bytes, start, end)) continue;
    kept.push(row);
    textBytes += end - start;
  }
  const offsets = new Uint32Array(kept.length);
  const starts = new Uint32Array(kept.length + 1);
  const text = Buffer.allocUnsafeSlow(textBytes);
  let at = 0;
  kept.forEach((row, i) => {
    offsets[i] = words[2 * row]!;
    starts[i] = at;
    for (let b = Number(ends[row]); b < Number(ends[row + 1]); b++) text[at++] = bytes[b]!;
  });
  starts[kept.length] = at;
  return { offsets, starts, text };
}

/**
 * The `id` of a LanceDB table's rows by their row address (`_rowid`), so a search returns addresses and
 * does not read its rows' ids from the data files: at 100k rows that read (a take) is a fixed cost of
 * about 1 ms of LanceDB's CPU a search (README, Benchmarks, session 25). An address names one row
 * version for the life of a table (a fragment id is never used twice: writes, updates and compaction all
 * make new fragments), so an address read once is never wrong, and an id never changes within a row's
 * versions. The table's ids are read in full at `fill()` (open, after an optimize), up to `maxBytes`,
 * and again in the background when a search had to take most of its rows (another node compacted the
 * table), at most once every `refillAfterMs`. Addresses not read (rows
 * written or compacted since) are taken from the table and kept; a search with an address the table no
 * longer has (compacted away between the search and the take) runs again reading ids. An id that is not
 * printable ASCII is never held, only taken.
 */
export function lanceRowIds(table: Table, { maxBytes = defaultRowIdsBytes, refillAfterMs = 60_000 } = {}) {
  let fragments = new Map<number, FragmentIds>();
  const taken = new ByteLru<bigint, string>(takenIdsBytes, (_, id) => entryOverheadBytes + stringBytes(id));
  let filling: Promise<void> | undefined;
  let lastFill = -Infinity;
  // Whether the last fill held every row: a table larger than maxBytes is left to the takes.
  let holdsAll = false;

  async function readAll(): Promise<void> {
    lastFill = performance.now();
    const next = new Map<number, FragmentIds>();
    const unordered = new Set<number>();
    let bytes = 0;
    // False once an id was left out for not being printable.
    let printableOnly = true;
    let full = false;
    for await (const batch of table.query().select(["id"]).withRowId()) {
      const words = addressWords(batch.getChild("_rowid")!.toArray() as BigUint64Array);
      const ids = batch.getChild("id")!.data[0]!;
      const ends = ids.valueOffsets as ArrayLike<number | bigint>;
      // Each run of one fragment's rows (a batch rarely spans two) becomes one segment.
      for (let from = 0; from < batch.numRows && !full; ) {
        const fragment = words[2 * from + 1]!;
        let to = from + 1;
        while (to < batch.numRows && words[2 * to + 1] === fragment) to++;
        // A row takes its offset, where its id starts, and its id; the first past maxBytes ends the fill.
        let fits = from;
        for (; fits < to; fits++) {
          const rowBytes = 8 + Number(ends[fits + 1]) - Number(ends[fits]);
          if (bytes + rowBytes > maxBytes) {
            full = true;
            break;
          }
          bytes += rowBytes;
        }
        const segment = segmentOf(words, ends, ids.values, from, fits);
        const f = next.get(fragment) ?? { firsts: [], segments: [] };
        next.set(fragment, f);
        const last = f.segments.at(-1)?.offsets.at(-1);
        if (!segment || (last !== undefined && segment.offsets[0]! <= last)) unordered.add(fragment);
        else {
          if (segment.offsets.length < fits - from) printableOnly = false;
          if (segment.offsets.length > 0) {
            f.firsts.push(segment.offsets[0]!);
            f.segments.push(segment);
          }
        }
        from = to;
      }
      if (full) break;
    }
    for (const fragment of unordered) next.delete(fragment);
    fragments = next;
    holdsAll = printableOnly && !full && unordered.size === 0;
  }

  function fill(): Promise<void> {
    filling ??= readAll().finally(() => (filling = undefined));
    return filling;
  }

  /** The ids of `addresses` in order, or undefined when the table no longer holds one of them. */
  async function idsOf(addresses: BigUint64Array): Promise<string[] | undefined> {
    const found = new Array<string>(addresses.length);
    const missing = new Set<bigint>();
    const words = addressWords(addresses);
    for (let i = 0; i < addresses.length; i++) {
      const id = idAt(fragments, words[2 * i + 1]!, words[2 * i]!) ?? (taken.size > 0 ? taken.get(addresses[i]!) : undefined);
      if (id === undefined) missing.add(addresses[i]!);
      else found[i] = id;
    }
    if (missing.size === 0) return found;
    if (holdsAll && missing.size > addresses.length / 2 && performance.now() - lastFill > refillAfterMs) {
      // Only a cost saved: takes answer until the fill is done, and the next surge of misses tries again.
      fill().catch(() => undefined);
    }
    const rows = await table.takeRowIds([...missing]).select(["id"]).withRowId().toArrow();
    // A take of rows the table no longer holds leaves them out; of none, yields a table without columns.
    if (rows.numRows < missing.size) return undefined;
    const ids = rows.getChild("id")!;
    const rowAddresses = rows.getChild("_rowid")!.toArray() as BigUint64Array;
    const byAddress = new Map<bigint, string>();
    for (let i = 0; i < rows.numRows; i++) {
      const id = ids.get(i) as string;
      byAddress.set(rowAddresses[i]!, id);
      taken.set(rowAddresses[i]!, id);
    }
    for (let i = 0; i < addresses.length; i++) found[i] ??= byAddress.get(addresses[i]!)!;
    return found;
  }

  return {
    fill,
    /** Rows whose ids the last fill read. */
    get held() {
      let rows = 0;
      for (const f of fragments.values()) for (const segment of f.segments) rows += segment.offsets.length;
      return rows;
    },
    /**
     * Runs `search` for row addresses (`withRowId()`, no `id` column) and returns its rows with their ids;
     * when an address is gone from the table, runs it again reading the `id` column.
     */
    async search(search: AddressedSearch): Promise<{ rows: ArrowTable; ids: string[] }> {
      const rows = await search(true);
      const addresses = rows.getChild("_rowid");
      const found = addresses ? await idsOf(addresses.toArray() as BigUint64Array) : [];
      if (found) return { rows, ids: found };
      const again = await search(false);
      const idColumn = again.getChild("id");
      return { rows: again, ids: Array.from({ length: again.numRows }, (_, i) => idColumn!.get(i) as string) };
    },
  };
}

export type LanceRowIds = ReturnType<typeof lanceRowIds>;
