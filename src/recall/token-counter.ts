import { Worker } from "node:worker_threads";
import { countTokens } from "./tokens.js";

// Token counting is linear but not free: 0.5 to 0.9 µs a character, so a 4 MiB batch would hold the
// event loop for seconds. Small calls count in place; larger ones go to one worker thread, started on
// first use, replaced if it dies, and stopped when idle (it holds about 60 MB: its own V8 isolate,
// loader and tables).

/** Characters counted on the event loop at most (about 7 ms at worst); more go to the worker. */
const inlineChars = 8192;

/** The worker exits after this long without work, by default. */
const defaultWorkerIdleMs = 30_000;

const workerUrl = new URL("./token-worker.mjs", import.meta.url);

interface Pending {
  resolve: (counts: number[]) => void;
  reject: (err: Error) => void;
}

export interface TokenCounter {
  /** cl100k_base tokens of each text (see tokens.ts), off the event loop when the texts are long. */
  count(texts: readonly string[]): Promise<number[]>;
  /** Whether the worker thread is up (it starts on the first long call and stops when idle). */
  readonly workerRunning: boolean;
  close(): Promise<void>;
}

export function createTokenCounter({ workerIdleMs = defaultWorkerIdleMs } = {}): TokenCounter {
  let worker: Worker | undefined;
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let closed = false;
  let idleTimer: NodeJS.Timeout | undefined;

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
      if (pending.size === 0) {
        w.unref();
        idleTimer = setTimeout(() => stopIdle(w), workerIdleMs).unref();
      }
    });
    const lost = (err: Error) => {
      if (worker === w) worker = undefined;
      failAll(err);
    };
    w.on("error", lost);
    w.on("exit", (code) => lost(new Error(`token counting worker exited with code ${code}`)));
    return (worker = w);
  }

  /** Ends an idle worker quietly: nothing is pending, and the next long call starts a new one. */
  function stopIdle(w: Worker): void {
    if (worker !== w || pending.size > 0) return;
    worker = undefined;
    w.removeAllListeners("exit").removeAllListeners("error");
    void w.terminate();
  }

  return {
    count(texts) {
      let chars = 0;
      for (const t of texts) chars += t.length;
      if (chars <= inlineChars) return Promise.resolve(texts.map(countTokens));
      if (closed) return Promise.reject(new Error("token counter is closed"));
      clearTimeout(idleTimer);
      const w = started();
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        w.ref();
        w.postMessage({ id, texts });
      });
    },
    get workerRunning() {
      return worker !== undefined;
    },
    async close() {
      closed = true;
      clearTimeout(idleTimer);
      const w = worker;
      worker = undefined;
      failAll(new Error("token counter is closed"));
      await w?.terminate();
    },
  };
}
