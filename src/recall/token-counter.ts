import { Worker } from "node:worker_threads";
import { countTokens } from "./tokens.js";

// Token counting is linear but not cheap: js-tiktoken takes 1 to 4 µs per byte of ordinary text, so a
// batch of one hundred 16 KiB memories would hold the event loop for seconds. Small calls count in
// place; larger ones go to one worker thread, started on first use and replaced if it dies.

/** Characters counted on the event loop at most (a few milliseconds); more go to the worker. */
const inlineChars = 8192;

const workerUrl = new URL("./token-worker.mjs", import.meta.url);

interface Pending {
  resolve: (counts: number[]) => void;
  reject: (err: Error) => void;
}

export interface TokenCounter {
  /** cl100k_base tokens of each text (see tokens.ts), off the event loop when the texts are long. */
  count(texts: readonly string[]): Promise<number[]>;
  close(): Promise<void>;
}

export function createTokenCounter(): TokenCounter {
  let worker: Worker | undefined;
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let closed = false;

  function failAll(err: Error): void {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  }

  function started(): Worker {
    if (worker) return worker;
    const w = new Worker(workerUrl);
    w.on("message", ({ id, counts }: { id: number; counts: number[] }) => {
      pending.get(id)?.resolve(counts);
      pending.delete(id);
      if (pending.size === 0) w.unref();
    });
    const lost = (err: Error) => {
      if (worker === w) worker = undefined;
      failAll(err);
    };
    w.on("error", lost);
    w.on("exit", (code) => lost(new Error(`token counting worker exited with code ${code}`)));
    return (worker = w);
  }

  return {
    count(texts) {
      let chars = 0;
      for (const t of texts) chars += t.length;
      if (chars <= inlineChars) return Promise.resolve(texts.map(countTokens));
      if (closed) return Promise.reject(new Error("token counter is closed"));
      const w = started();
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        w.ref();
        w.postMessage({ id, texts });
      });
    },
    async close() {
      closed = true;
      const w = worker;
      worker = undefined;
      failAll(new Error("token counter is closed"));
      await w?.terminate();
    },
  };
}
