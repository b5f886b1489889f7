import type { Table } from "@lancedb/lancedb";
import type { Table as ArrowTable, Vector } from "apache-arrow";
import { ByteLru, entryOverheadBytes, stringBytes } from "../../embeddings/lru.js";
import type { LanceWhere } from "./lance-filter.js";
import { commonScopeReader, inScope, type RowScope } from "./scope-coverage.js";
import { decodeVector, encodeVector } from "./vector-codes.js";

/** Bytes of ids a collection's handle holds from its last full read: about 1.7 million 30-character ids. */
export const defaultRowIdsBytes = 64 * 2 ** 20;
/** Bytes of 8-bit vectors it holds besides, if the whole table fits: 512 dimensions, about 130,000 rows. */
export const defaultHeldVectorsBytes = 64 * 2 ** 20;
/** Bytes of ids, and of vectors, taken since (rows written or moved after that read), least recently used out. */
const takenBytes = 2 ** 20;

/**
 * A search run for row addresses (`_rowid`, no `id` column) when `byAddress`, reading the `vector` column
 * when `readVectors`, with the WHERE clause `where` ("" for none).
 */
export type AddressedSearch = (byAddress: boolean, readVectors: boolean, where: string) => Promise<ArrowTable>;

/**
 * A run of one fragment's rows as one batch of a fill held them, in arrays of exactly their size (a
 * million rows are a few hundred objects for the garbage collector, and nothing is grown and copied):
 * row offsets ascending, each row's id as Latin-1 bytes and, when the fill read vectors, each row's
 * vector in 8 bits.
 */
interface Segment {
  offsets: Uint32Array;
  /** Where row i's id starts in `text`; it ends where row i + 1's starts. */
  starts: Uint32Array;
  text: Buffer;
  /** Row i's vector is `dimensions` codes from i * dimensions, times scales[i]. */
  codes?: Int8Array;
  scales?: Float32Array;
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
interface FragmentRows {
  firsts: number[];
  segments: Segment[];
}

/** Where a fill held the row at (fragment, offset), if it did. */
function heldRow(fragments: ReadonlyMap<number, FragmentRows>, fragment: number, offset: number): { segment: Segment; row: number } | undefined {
  const f = fragments.get(fragment);
  if (!f) return undefined;
  const segment = f.segments[lastAtMost(f.firsts, offset)];
  if (!segment) return undefined;
  const row = lastAtMost(segment.offsets, offset);
  return row >= 0 && segment.offsets[row] === offset ? { segment, row } : undefined;
}

/** Printable ASCII: ids are (`src/ids.ts`), and such bytes read back as the same string. */
function printable(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i]! < 0x20 || bytes[i]! > 0x7e) return false;
  return true;
}

/** A batch's vectors: row r's `dimensions` values start at `at + r * dimensions` of `values`. */
interface BatchVectors {
  values: Float32Array;
  at: number;
  dimensions: number;
}

/** The float32 values under one batch's fixed-size-list vector column (a slice's child is sliced with it). */
function batchVectors(column: Vector, dimensions: number): BatchVectors {
  const child = column.data[0]!.children[0]!;
  return { values: child.values as Float32Array, at: child.offset, dimensions };
}

/**
 * The segment of rows [from, to) of a batch (all of one fragment), without ids that are not printable;
 * undefined if their offsets do not ascend (LanceDB scans a fragment in offset order).
 */
function segmentOf(words: Uint32Array, ends: ArrayLike<number | bigint>, bytes: Uint8Array, from: number, to: number, vectors?: BatchVectors): Segment | undefined {
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
  const codes = vectors ? new Int8Array(kept.length * vectors.dimensions) : undefined;
  const scales = vectors ? new Float32Array(kept.length) : undefined;
  let at = 0;
  kept.forEach((row, i) => {
    offsets[i] = words[2 * row]!;
    starts[i] = at;
    for (let b = Number(ends[row]); b < Number(ends[row + 1]); b++) text[at++] = bytes[b]!;
    if (vectors) scales![i] = encodeVector(vectors.values, vectors.at + row * vectors.dimensions, vectors.dimensions, codes!, i * vectors.dimensions);
  });
  starts[kept.length] = at;
  return { offsets, starts, text, ...(vectors ? { codes, scales } : {}) };
}

export interface LanceRowCacheOptions {
  /** The `vector` column's dimensions: without them no vectors are held. */
  dimensions?: number;
  maxIdBytes?: number;
  /** Vectors are held only when every row's fit: rows × (dimensions + 4) bytes. */
  maxVectorBytes?: number;
  refillAfterMs?: number;
  /** The table has `workspace_id` and `containers` columns: fills read the scope its rows share. */
  readsScope?: boolean;
}

/**
 * The `id` of a LanceDB table's rows by their row address (`_rowid`), so a search returns addresses and
 * does not read its rows' ids from the data files: at 100k rows that read (a take) is a fixed cost of
 * about 1 ms of LanceDB's CPU a search (docs/benchmarks/measurement-log-2026-11.md, "Searches return row addresses"). While the table is small enough,
 * their vectors too, in 8 bits, so a full-text search whose hits' vectors are wanted (hybrid recall scores
 * keyword-only hits by cosine) need not read them (another take: at 100k, 1 ms of LanceDB's CPU a hybrid
 * recall, same page, "Hybrid search reads no vectors from LanceDB"). An address names one row version for the life of a table (a fragment id is never
 * used twice: writes, updates and compaction all make new fragments), so an address read once is never
 * wrong, and an id never changes within a row's versions. The table's ids are read in full at `fill()`
 * (open, after an optimize), up to `maxIdBytes`, and again in the background when a search had to take
 * most of its rows (another node compacted the table), at most once every `refillAfterMs`. Vectors are
 * read with them at open; a fill after an optimize leaves them out (reading them costs ten times the
 * ids: 0.7 to 1 s of CPU at 100k, and writes fold every few seconds), and the first search that wants
 * them `refillAfterMs` after the last fill reads them again in the background.
 * Addresses not read (rows written or compacted since) are taken from the table and kept; a search with
 * an address the table no longer has (compacted away between the search and the take) runs again
 * reading ids (and vectors). An id that is not printable ASCII is never held, only taken.
 * With `readsScope`, a fill also finds the scope every row is in (one workspace, one container: a
 * self-hosted agent's table), and rows taken since are taken with theirs. A search in that scope then runs
 * without its workspace and container clauses, which cost about 1.1 ms of LanceDB's CPU a hybrid recall
 * at 100k rows (same page, "Unscoped searches in the scope every row is in"), and keeps its rows if every one is in the scope: its k
 * best are then the scoped search's k best. A row of another scope among them sends it to the scoped
 * search, and the searches after it too, until the next fill.
 */
export function lanceRowCache(
  table: Table,
  { dimensions, maxIdBytes = defaultRowIdsBytes, maxVectorBytes = defaultHeldVectorsBytes, refillAfterMs = 60_000, readsScope = false }: LanceRowCacheOptions = {},
) {
  let fragments = new Map<number, FragmentRows>();
  const takenIds = new ByteLru<bigint, TakenId>(
    takenBytes,
    (_, { id, scope }) => entryOverheadBytes + stringBytes(id) + (scope ? stringBytes(scope.workspaceId) + scope.containers.reduce((n, c) => n + stringBytes(c), 0) : 0),
  );
  const takenVectors = new ByteLru<bigint, Float32Array>(takenBytes, (_, v) => entryOverheadBytes + v.byteLength);
  let filling: Promise<void> | undefined;
  let lastFill = -Infinity;
  // Whether the last fill held every row: a table larger than maxIdBytes is left to the takes.
  let holdsAll = false;
  // Whether it held their vectors too, and whether the table's would fit when it last counted.
  let holdsVectors = false;
  let vectorsFit = false;
  // The scope every row the last fill held is in (null: unknown, or none), and whether a search in it has
  // met a row of another scope since.
  let commonScope: RowScope | null = null;
  let strayed = false;

  async function readAll(readVectors: boolean): Promise<void> {
    lastFill = performance.now();
    vectorsFit = dimensions !== undefined && maxVectorBytes > 0 && (await table.countRows()) * (dimensions + 4) <= maxVectorBytes;
    // The dimensions of the vectors this fill reads, if it reads them.
    const vectorDimensions = readVectors && vectorsFit ? dimensions : undefined;
    const next = new Map<number, FragmentRows>();
    const unordered = new Set<number>();
    let bytes = 0;
    let rows = 0;
    // False once an id was left out for not being printable.
    let printableOnly = true;
    let full = false;
    const scopes = readsScope ? commonScopeReader() : undefined;
    const columns = ["id", ...(scopes ? ["workspace_id", "containers"] : []), ...(vectorDimensions !== undefined ? ["vector"] : [])];
    for await (const batch of table.query().select(columns).withRowId()) {
      scopes?.add(batch.getChild("workspace_id")!, batch.getChild("containers")!, batch.numRows);
      const words = addressWords(batch.getChild("_rowid")!.toArray() as BigUint64Array);
      const ids = batch.getChild("id")!.data[0]!;
      const ends = ids.valueOffsets as ArrayLike<number | bigint>;
      const vectors = vectorDimensions !== undefined ? batchVectors(batch.getChild("vector")!, vectorDimensions) : undefined;
      // Each run of one fragment's rows (a batch rarely spans two) becomes one segment.
      for (let from = 0; from < batch.numRows && !full; ) {
        const fragment = words[2 * from + 1]!;
        let to = from + 1;
        while (to < batch.numRows && words[2 * to + 1] === fragment) to++;
        // A row takes its offset, where its id starts, and its id; the first past maxIdBytes ends the fill.
        let fits = from;
        for (; fits < to; fits++) {
          const rowBytes = 8 + Number(ends[fits + 1]) - Number(ends[fits]);
          if (bytes + rowBytes > maxIdBytes) {
            full = true;
            break;
          }
          bytes += rowBytes;
        }
        const segment = segmentOf(words, ends, ids.values, from, fits, vectors);
        const f = next.get(fragment) ?? { firsts: [], segments: [] };
        next.set(fragment, f);
        const last = f.segments.at(-1)?.offsets.at(-1);
        if (!segment || (last !== undefined && segment.offsets[0]! <= last)) unordered.add(fragment);
        else {
          if (segment.offsets.length < fits - from) printableOnly = false;
          if (segment.offsets.length > 0) {
            f.firsts.push(segment.offsets[0]!);
            f.segments.push(segment);
            rows += segment.offsets.length;
          }
        }
        from = to;
      }
      if (full) break;
    }
    for (const fragment of unordered) next.delete(fragment);
    fragments = next;
    holdsAll = printableOnly && !full && unordered.size === 0;
    commonScope = holdsAll && scopes ? scopes.common() : null;
    strayed = false;
    // Rows written between the count and the scan may have taken the vectors past their cap.
    holdsVectors = vectorDimensions !== undefined && holdsAll && rows * (vectorDimensions + 4) <= maxVectorBytes;
    if (vectorDimensions !== undefined && !holdsVectors) {
      for (const f of fragments.values()) {
        for (const segment of f.segments) {
          delete segment.codes;
          delete segment.scales;
        }
      }
    }
  }

  /** Reads the table's ids, and its vectors if `withVectors` and they fit; a fill under way answers for both. */
  function fill(withVectors = true): Promise<void> {
    filling ??= readAll(withVectors).finally(() => (filling = undefined));
    return filling;
  }

  /**
   * The values of `addresses` in order: those a fill held (`held`), then those taken before, then a take
   * of the rest reading `columns`; undefined when the table no longer holds one of them.
   */
  async function valuesOf<T>(
    addresses: BigUint64Array,
    held: (at: { segment: Segment; row: number }) => T | undefined,
    taken: ByteLru<bigint, T>,
    columns: string[],
    read: (rows: ArrowTable, row: number) => T,
  ): Promise<T[] | undefined> {
    const found = new Array<T>(addresses.length);
    const missing = new Set<bigint>();
    const words = addressWords(addresses);
    for (let i = 0; i < addresses.length; i++) {
      const at = heldRow(fragments, words[2 * i + 1]!, words[2 * i]!);
      const value = (at && held(at)) ?? (taken.size > 0 ? taken.get(addresses[i]!) : undefined);
      if (value === undefined) missing.add(addresses[i]!);
      else found[i] = value;
    }
    if (missing.size === 0) return found;
    if (holdsAll && missing.size > addresses.length / 2 && performance.now() - lastFill > refillAfterMs) {
      // Only a cost saved: takes answer until the fill is done, and the next surge of misses tries again.
      fill(false).catch(() => undefined);
    }
    const rows = await table.takeRowIds([...missing]).select(columns).withRowId().toArrow();
    // A take of rows the table no longer holds leaves them out; of none, yields a table without columns.
    if (rows.numRows < missing.size) return undefined;
    const rowAddresses = rows.getChild("_rowid")!.toArray() as BigUint64Array;
    const byAddress = new Map<bigint, T>();
    for (let i = 0; i < rows.numRows; i++) {
      const value = read(rows, i);
      byAddress.set(rowAddresses[i]!, value);
      taken.set(rowAddresses[i]!, value);
    }
    for (let i = 0; i < addresses.length; i++) found[i] ??= byAddress.get(addresses[i]!)!;
    return found;
  }

  /** The ids of `addresses`, each taken one with its scope (held ones are in the fill's common scope). */
  const idsOf = (addresses: BigUint64Array) =>
    valuesOf<TakenId>(
      addresses,
      ({ segment, row }) => ({ id: segment.text.toString("latin1", segment.starts[row]!, segment.starts[row + 1]!), scope: null }),
      takenIds,
      readsScope ? ["id", "workspace_id", "containers"] : ["id"],
      (rows, i) => ({
        id: rows.getChild("id")!.get(i) as string,
        scope: readsScope ? { workspaceId: rows.getChild("workspace_id")!.get(i) as string, containers: Array.from(rows.getChild("containers")!.get(i)!.toArray() as string[]) } : null,
      }),
    );

  const vectorsOf = (addresses: BigUint64Array) =>
    valuesOf(
      addresses,
      ({ segment, row }) => (segment.codes ? decodeVector(segment.codes, row * dimensions!, dimensions!, segment.scales![row]!) : undefined),
      takenVectors,
      ["vector"],
      // A copy: a view would keep the whole taken batch alive in the cache.
      (rows, i) => Float32Array.from(rows.getChild("vector")!.get(i)!.toArray() as Float32Array),
    );

  return {
    fill,
    /** Whether the last fill held the rows' vectors. */
    get holdsVectors() {
      return holdsVectors;
    },
    /** Rows whose ids the last fill read. */
    get held() {
      let rows = 0;
      for (const f of fragments.values()) for (const segment of f.segments) rows += segment.offsets.length;
      return rows;
    },
    /**
     * Runs `search` with `where` for row addresses and returns its rows with their ids, and with their
     * vectors when `withVectors` (read by the search unless this handle holds them); when an address is
     * gone from the table, runs it again reading ids (and vectors). Unscoped first when every row is in
     * the unscoped clause's scope.
     */
    async search(search: AddressedSearch, where: LanceWhere, withVectors = false): Promise<{ rows: ArrowTable; ids: string[]; vectors: Float32Array[] | null }> {
      const heldVectors = withVectors && holdsVectors;
      if (withVectors && !holdsVectors && vectorsFit && performance.now() - lastFill > refillAfterMs) fill().catch(() => undefined);
      const readVectors = withVectors && !heldVectors;
      // The fill whose common scope is checked: one that ends during the search replaces its rows too.
      const checked = fragments;
      const withoutScope = where.unscoped;
      const unscoped = withoutScope !== undefined && !strayed && commonScope !== null && inScope(commonScope, withoutScope.scope);
      // The search by address with `clause`, its rows' addresses and their ids (undefined: one is gone).
      const byAddress = async (clause: string) => {
        const rows = await search(true, readVectors, clause);
        const addresses = rows.getChild("_rowid")?.toArray() as BigUint64Array | undefined;
        return { rows, addresses, taken: addresses && (await idsOf(addresses)) };
      };
      let found = await byAddress(unscoped ? withoutScope.where : where.scoped);
      if (unscoped && found.taken && (fragments !== checked || found.taken.some((t) => t.scope !== null && !inScope(t.scope, withoutScope.scope)))) {
        if (fragments === checked) strayed = true;
        found = await byAddress(where.scoped);
      }
      const { rows, addresses, taken } = found;
      // A search without hits yields an Arrow table without columns.
      if (!addresses) return { rows, ids: [], vectors: withVectors ? [] : null };
      const ids = taken?.map((t) => t.id);
      const vectors = ids && withVectors ? (heldVectors ? await vectorsOf(addresses) : columnVectors(rows)) : null;
      if (ids && vectors !== undefined) return { rows, ids, vectors };
      const again = await search(false, withVectors, where.scoped);
      const idColumn = again.getChild("id");
      return { rows: again, ids: Array.from({ length: again.numRows }, (_, i) => idColumn!.get(i) as string), vectors: withVectors ? columnVectors(again) : null };
    },
  };
}

/** A row's id, and its scope when it was taken from a table whose scope is read (null: held by a fill). */
interface TakenId {
  id: string;
  scope: RowScope | null;
}

/** The `vector` column of a search's rows, as views of its data. */
function columnVectors(rows: ArrowTable): Float32Array[] {
  const column = rows.getChild("vector");
  return Array.from({ length: rows.numRows }, (_, i) => column!.get(i)!.toArray() as Float32Array);
}

export type LanceRowCache = ReturnType<typeof lanceRowCache>;
