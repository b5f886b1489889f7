import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { smapsSplit, splitSmaps } from "../../bench/lib/smaps.js";

/** One smaps entry: its header line and the Rss line (the other fields do not matter here). */
const entry = (start: bigint, end: bigint, perms: string, name: string, rssKb: number) =>
  `${start.toString(16)}-${end.toString(16)} ${perms} 00000000 00:00 0    ${name}\nSize: ${(end - start) / 1024n} kB\nRss: ${rssKb} kB\n`;

const MiB = 1024n * 1024n;

it("classes each mapping by what it is: brk heap, arena, wasm reservation, library, file, other", () => {
  const arena = 0x7f0000000000n; // a 64 MiB boundary
  const wasm = 0x7e0000100000n;
  const text = [
    entry(0x1000000n, 0x1000000n + 100n * MiB, "rw-p", "[heap]", 30 * 1024),
    // An arena: its used part, then the inaccessible rest of its 64 MiB.
    entry(arena, arena + 10n * MiB, "rw-p", "", 8 * 1024),
    entry(arena + 10n * MiB, arena + 64n * MiB, "---p", "", 0),
    // A wasm memory: 200 MiB usable, then guard regions up to 8 GiB.
    entry(wasm, wasm + 200n * MiB, "rw-p", "", 50 * 1024),
    entry(wasm + 200n * MiB, wasm + 8192n * MiB, "---p", "", 0),
    // Anonymous, neither: V8 pages or a large allocation.
    entry(0x7d0000001000n, 0x7d0000001000n + 4n * MiB, "rw-p", "", 3 * 1024),
    entry(0x7c0000000000n, 0x7c0000000000n + 2n * MiB, "r-xp", "/usr/lib/node_modules/x/lancedb.linux-x64-gnu.node", 20 * 1024),
    entry(0x7b0000000000n, 0x7b0000000000n + 2n * MiB, "r--p", "/usr/lib/x86_64-linux-gnu/libc.so.6", 1024),
    entry(0x7a0000000000n, 0x7a0000000000n + 2n * MiB, "r--p", "/data/lance/0.manifest", 2 * 1024),
  ].join("");
  expect(splitSmaps(text)).toEqual({ brkHeap: 30, mallocArenas: 8, reservations: 50, otherAnon: 3, libraries: 21, otherFiles: 2 });
});

it("accounts for all of a live process's resident memory", async () => {
  // A quiet process of its own: test files share this one, whose other threads may allocate between the reads.
  const child = spawn(process.execPath, ["-e", "globalThis.kept = Buffer.alloc(32 * 2 ** 20, 1); console.log('ready'); setInterval(() => {}, 1000);"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    await once(child.stdout!, "data");
    const pid = child.pid!;
    const split = smapsSplit(pid);
    const vmRssMb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
    const total = Object.values(split).reduce((a, b) => a + b, 0);
    // Read moments apart, and each class is rounded to a MB.
    expect(Math.abs(total - vmRssMb)).toBeLessThan(Math.max(10, vmRssMb * 0.05));
    expect(split.libraries).toBeGreaterThan(0);
    expect(vmRssMb).toBeGreaterThan(32);
  } finally {
    child.kill();
  }
});
