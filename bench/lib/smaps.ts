// Where a process's resident memory lives, by kind of mapping, from /proc/<pid>/smaps (Linux only):
// what /metrics cannot tell apart inside "native" (the allocator's heaps, big reservations, files).
import { readFileSync } from "node:fs";

/** Resident MB by kind of mapping. */
export interface SmapsSplit {
  /** glibc's main arena, grown with brk: small allocations of the main thread and of arena 0. */
  brkHeap: number;
  /**
   * glibc's other arenas: 64 MiB reservations at 64 MiB boundaries (one arena per thread up to
   * MALLOC_ARENA_MAX), where native threads (LanceDB's, libuv's) allocate.
   */
  mallocArenas: number;
  /** Reservations of 1 GiB or more: WebAssembly memories (PGlite) with their guard regions. */
  reservations: number;
  /** Other anonymous mappings: V8's heap pages, large single allocations, thread stacks. */
  otherAnon: number;
  /** Mapped shared libraries (node, LanceDB's and onnxruntime's .node files). */
  libraries: number;
  /** Other file mappings (data files, locales). */
  otherFiles: number;
}

interface Mapping {
  start: bigint;
  end: bigint;
  perms: string;
  name: string;
  rssKb: number;
}

const arenaBytes = 64n * 1024n * 1024n;
const reservationBytes = 1024n * 1024n * 1024n;

function mappings(smaps: string): Mapping[] {
  const list: Mapping[] = [];
  for (const line of smaps.split("\n")) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (header) {
      list.push({ start: BigInt(`0x${header[1]}`), end: BigInt(`0x${header[2]}`), perms: header[3]!, name: header[4]!.trim(), rssKb: 0 });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && list.length > 0) list[list.length - 1]!.rssKb = Number(rss[1]);
  }
  return list;
}

/**
 * Sums smaps' Rss by kind of mapping (pure: takes the file's text). An arena or a wasm memory shows as
 * its usable read-write part followed by the inaccessible rest of its reservation, so an anonymous
 * mapping is classed by the extent of itself and the contiguous inaccessible mapping after it.
 */
export function splitSmaps(smaps: string): SmapsSplit {
  const kb: SmapsSplit = { brkHeap: 0, mallocArenas: 0, reservations: 0, otherAnon: 0, libraries: 0, otherFiles: 0 };
  const list = mappings(smaps);
  list.forEach((m, i) => {
    let kind: keyof SmapsSplit;
    if (m.name === "[heap]") kind = "brkHeap";
    else if (m.name.startsWith("/")) kind = /\.(so|node)(\.|$)/.test(m.name) || m.name.endsWith("/node") ? "libraries" : "otherFiles";
    else {
      const next = list[i + 1];
      const end = next && next.start === m.end && next.name === "" && next.perms.startsWith("---") ? next.end : m.end;
      const extent = end - m.start;
      if (extent >= reservationBytes) kind = "reservations";
      else if (m.start % arenaBytes === 0n && extent === arenaBytes) kind = "mallocArenas";
      else kind = "otherAnon";
    }
    kb[kind] += m.rssKb;
  });
  const mb = (k: number) => Math.round(k / 1024);
  return {
    brkHeap: mb(kb.brkHeap),
    mallocArenas: mb(kb.mallocArenas),
    reservations: mb(kb.reservations),
    otherAnon: mb(kb.otherAnon),
    libraries: mb(kb.libraries),
    otherFiles: mb(kb.otherFiles),
  };
}

export const smapsSplit = (pid: number): SmapsSplit => splitSmaps(readFileSync(`/proc/${pid}/smaps`, "utf8"));
