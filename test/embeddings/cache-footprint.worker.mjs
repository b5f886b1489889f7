// Fills one cache in a thread of its own and reports the heap it keeps (byte-caps.test.ts). The thread's
// isolate runs nothing else, so its heap and external memory grow by what the cache keeps and nothing
// more: measured in the test process, the test runner's own traffic grew the heap by megabytes now and
// then. Plain JavaScript that registers tsx itself, since a worker does not inherit the test's loader.
import v8 from "node:v8";
import vm from "node:vm";
import { parentPort, workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
const { cachedQueryEmbedder } = await import("../../src/embeddings/query-cache.ts");
const { cachingEmbedder } = await import("../../src/embeddings/text-cache.ts");

v8.setFlagsFromString("--expose-gc");
// Freed ArrayBuffer memory (the evicted vectors) is otherwise released by a background sweeper after
// the collection, so external memory read right after gc() could still count thousands of them.
v8.setFlagsFromString("--no-concurrent-array-buffer-sweeping");
const gc = vm.runInNewContext("gc");

/** A 512-d model: each text's vector is 2 KiB. */
const model = {
  info: { provider: "use-lite", model: "fixed", dimensions: 512 },
  embed: async (texts) => texts.map(() => new Float32Array(512).fill(0.04)),
  close: async () => {},
};

const retained = () => {
  const heap = v8.getHeapStatistics();
  return heap.used_heap_size + heap.external_memory;
};

/** @type {{ cache: "write" | "query"; capBytes: number }} */
const { cache, capBytes } = workerData;
gc();
const before = retained();
let kept;
if (cache === "write") {
  // 500 distinct 16 KiB texts (the largest content): 8 MiB of text.
  kept = cachingEmbedder(model, capBytes);
  for (let i = 0; i < 500; i++) await kept.embed([`${i} `.padEnd(16_384, "memory text ")]);
} else {
  kept = cachedQueryEmbedder(model, capBytes);
  // Each query a string of its own: a slice would keep the 16 KiB text it was cut from.
  for (let i = 0; i < 2000; i++) await kept(`${i} `.padEnd(4096, "query text "));
}
gc();
parentPort.postMessage({ grewBy: retained() - before, kept: kept !== undefined });
