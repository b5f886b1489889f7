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
 * The ids of one fragment's rows in three arrays, so a million rows are a few objects for the garbage
 * collector rather than millions: row offsets ascending, and each row's id as Latin-1 bytes.
 */
interface FragmentIds {
  offsets: Uint32Array;
  /** Where row i's id starts in `text`; it ends where row i + 1's starts. */
  starts: Uint32Array;
  text: Buffer;
}

/** Row addresses as pairs of 32-bit words, little-endian: each row's offset, then its fragment. */
const addressWords = (addresses: BigUint64Array) => new Uint32Array(addresses.buffer, addresses.byteOffset, 2 * addresses.length);

function idAt(fragments: ReadonlyMap<number, FragmentIds>, fragment: number, offset: number): string | undefined {
  const f = fragments.get(fragment);
  if (!f) return undefined;
  let lo = 0;
  let hi = f.offsets.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = f.offsets[mid]!;
    if (at === offset) return f.text.toString("latin1", f.starts[mid]!, f.starts[mid + 1]!);
    if (at < offset) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/** Bytes a held row takes: its offset, where its id starts, and the id. */
const heldBytes = (idBytes: number) => 8 + idBytes;

const grown = (a: Uint32Array) => {
  const b = new Uint32Array(2 * a.length);
  b.set(a);
  return b;
};

/**
 * Collects one fragment's rows as a fill reads them, copying each id's bytes from the Arrow column (no
 * string per row). LanceDB scans a fragment in offset order.
 */
class FragmentBuilder {
  private offsets = new Uint32Array(256);
  private starts = new Uint32Array(256);
  private text = Buffer.allocUnsafe(8192);
  private rows = 0;
  private textBytes = 0;

  add(offset: number, bytes: Uint8Array, from: number, to: number): void {
    if (this.rows === this.offsets.length) {
      this.offsets = grown(this.offsets);
      this.starts = grown(this.starts);
    }
    if (this.textBytes + to - from > this.text.length) {
      const text = Buffer.allocUnsafe(Math.max(2 * this.text.length, this.textBytes + to - from));
      this.text.copy(text, 0, 0, this.textBytes);
      this.text = text;
    }
    this.offsets[this.rows] = offset;
    this.starts[this.rows] = this.textBytes;
    for (let i = from; i < to; i++) this.text[this.textBytes++] = bytes[i]!;
    this.rows++;
  }

  /** The fragment's ids, or undefined if they did not come in offset order (then they are taken instead). */
  build(): FragmentIds | undefined {
    const n = this.rows;
    const offsets = this.offsets.slice(0, n);
    if (!offsets.every((o, i) => i === 0 || o > offsets[i - 1]!)) return undefined;
    const starts = new Uint32Array(n + 1);
    starts.set(this.starts.subarray(0, n));
    starts[n] = this.textBytes;
    return { offsets, starts, text: Buffer.from(this.text.subarray(0, this.textBytes)) };
  }
}

/** Printable ASCII: ids are (`src/ids.ts`), and such bytes read back as the same string. */
function printable(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i]! < 0x20 || bytes[i]! > 0x7e) return false;
  return true;
}

/**
 * The `id` of a LanceDB table's rows by their row address (`_rowid`), so a search returns addresses and
 * does not read its rows' ids from the data files: at 100k rows that read (a take) is a fixed cost of
 * about 1 ms of LanceDB's CPU a search (README, Benchmarks, session 25). An address names one row
 * version for the life of a table (a fragment id is never used twice: writes, updates and compaction all
 * make new fragments), so an address read once is never wrong, and an id never changes within a row's
 * versions. The table's ids are read in full at `fill()` (open, after an
 * optimize), up to `maxBytes`, and again in the background when a search had to take most of its rows
 * (another node compacted the table), at most once every `refillAfterMs`. Addresses not read (rows
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
  let held = 0;

  async function readAll(): Promise<void> {
    lastFill = performance.now();
    const builders = new Map<number, FragmentBuilder>();
    let bytes = 0;
    let complete = true;
    scan: for await (const batch of table.query().select(["id"]).withRowId()) {
      const words = addressWords(batch.getChild("_rowid")!.toArray() as BigUint64Array);
      let row = 0;
      for (const data of batch.getChild("id")!.data) {
        const ends = data.valueOffsets as ArrayLike<number | bigint>;
        for (let i = 0; i < data.length; i++, row++) {
          const from = Number(ends[i]);
          const to = Number(ends[i + 1]);
          bytes += heldBytes(to - from);
          if (bytes > maxBytes) {
            complete = false;
            break scan;
          }
          if (!printable(data.values, from, to)) {
            complete = false;
            continue;
          }
          const fragment = words[2 * row + 1]!;
          let builder = builders.get(fragment);
          if (!builder) builders.set(fragment, (builder = new FragmentBuilder()));
          builder.add(words[2 * row]!, data.values, from, to);
        }
      }
    }
    const next = new Map<number, FragmentIds>();
    let rows = 0;
    for (const [fragment, builder] of builders) {
      const built = builder.build();
      if (!built) {
        complete = false;
        continue;
      }
      rows += built.offsets.length;
      next.set(fragment, built);
    }
    fragments = next;
    held = rows;
    holdsAll = complete;
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
      return held;
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
