import { fork, type ChildProcess } from "node:child_process";
import { getPriority, setPriority } from "node:os";
import { fileURLToPath } from "node:url";
import type { Embedder, EmbeddingModelInfo } from "./embedder.js";

// Process protocol (model-process.mjs): the parent first sends what to load; the process answers "ready"
// (with the model's dimensions) or "failed" once; then for each posted {texts} it answers one "result"
// or "error".
export type LoadMessage =
  | { runtime: "onnx"; model: Uint8Array; threads: number }
  | { runtime: "tfjs" }
  | { runtime: "transformers"; modelPath: string; model: string; threads: number };
type ProcessReply =
  | { type: "ready"; dimensions: number }
  | { type: "failed"; message: string }
  | { type: "result"; vectors: Float32Array[] }
  | { type: "error"; message: string };

interface Job {
  texts: string[];
  /** Texts in the embed() call this job belongs to; smaller calls run first. */
  callSize: number;
  /** Set once the job has been put back after its process died: a second death fails it. */
  retried: boolean;
  resolve: (vectors: Float32Array[]) => void;
  reject: (err: Error) => void;
}

const processPath = fileURLToPath(new URL("./model-process.mjs", import.meta.url));
// Padded characters per batch. A query waits for the batch its process is running: during an API
// ingest with recalls, batches of 4,096 (about 37 sentences) kept recall's embedding waiting about 100 ms
// longer than 1,024, and 512 (about 4) took recall's p50 from 66-80 ms to 51-56 against 1,024 at about
// the same ingest rate (3,000 to 5,000 memories, three runs each). Bulk embedding runs faster in big
// batches (one process, two threads, sentences of about 110 characters: 395-427/s at 4,096, 363-386/s at
// 1,024). So batches stay small while single-text calls (recall queries, single writes) keep coming, and
// a bulk load alone gets big ones. A model process's memory keeps the high-water mark of its largest
// batch either way.
export const batchChars = { interactive: 512, bulk: 4096 };
/** How long after a single-text call batches stay small. */
const interactiveMs = 1000;

/**
 * Splits texts into batches of their indexes: similar lengths together (every text in a batch is padded
 * to the longest), at most `maxTexts` and `paddedChars` padded characters each, which also bounds how long
 * a query can wait behind a batch. A text longer than `paddedChars` goes alone.
 */
export function batchesByLength(texts: readonly string[], maxTexts: number, paddedChars: number): number[][] {
  const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
  const batches: number[][] = [];
  let current: number[] = [];
  for (const i of order) {
    const full = current.length === maxTexts || (current.length + 1) * texts[i]!.length > paddedChars;
    if (full && current.length > 0) {
      batches.push(current);
      current = [];
    }
    current.push(i);
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** One model-owning child process running one job at a time; it keeps the parent alive only while busy. */
class ModelProcess {
  // Plain node, whatever runs the parent (tsx, vitest); "advanced" serialization carries typed arrays.
  private readonly child: ChildProcess = fork(processPath, [], {
    execArgv: [],
    serialization: "advanced",
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
  private current: Job | undefined;
  private loaded = false;
  private dead = false;
  /** The model's dimensions, once it has loaded. */
  readonly ready: Promise<number>;
  private settleReady!: { resolve: (dimensions: number) => void; reject: (err: Error) => void };

  constructor(
    /** What the errors call the model ("use-lite"). */
    private readonly label: string,
    load: Promise<LoadMessage>,
    niceness: number,
    private readonly nextJob: () => Job | undefined,
    /** Reports a dead process with the job it was running and whether it had loaded the model. */
    private readonly onDeath: (process: ModelProcess, job: Job | undefined, err: Error, loaded: boolean) => void,
  ) {
    this.ready = new Promise((resolve, reject) => {
      this.settleReady = { resolve, reject };
    });
    // A replacement's failure to load is reported through onDeath; nobody else awaits its readiness.
    this.ready.catch(() => undefined);
    // Raising a niceness needs no privilege. A process that could not start, or died at once, is reported by its exit.
    if (niceness > 0 && this.child.pid !== undefined) {
      try {
        setPriority(this.child.pid, Math.min(19, getPriority() + niceness));
      } catch {
        // gone already
      }
    }
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
    this.child.on("message", (reply: ProcessReply) => this.receive(reply));
    this.child.on("error", (err) => this.die(err));
    this.child.on("exit", (code, signal) => this.die(new Error(`${label} model process exited with ${signal ?? `code ${code}`}`)));
    // No handler may refer to `load`: the handlers live as long as the process, the model is 28 MB.
    load.then(
      (message) => this.child.send(message),
      (err: Error) => {
        this.die(err);
        this.child.kill();
      },
    );
  }

  /** Takes the next queued job if idle and loaded. */
  pull(): void {
    if (this.current || !this.loaded || this.dead) return;
    this.current = this.nextJob();
    if (!this.current) return;
    this.setKeepsParentAlive(true);
    this.child.send({ texts: this.current.texts });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Ends the process (SIGKILL when `crash`, as a crash would) and resolves once it has exited. */
  async terminate(crash = false): Promise<number | null> {
    // Whoever awaits the exit keeps the parent alive until it comes.
    this.child.ref();
    this.child.kill(crash ? "SIGKILL" : "SIGTERM");
    return this.exited;
  }

  private setKeepsParentAlive(busy: boolean): void {
    if (busy) {
      this.child.ref();
      this.child.channel?.ref();
    } else {
      this.child.unref();
      this.child.channel?.unref();
    }
  }

  private receive(reply: ProcessReply): void {
    if (reply.type === "ready") {
      this.loaded = true;
      this.setKeepsParentAlive(false);
      this.settleReady.resolve(reply.dimensions);
      this.pull();
    } else if (reply.type === "failed") {
      this.die(new Error(`${this.label} model failed to load: ${reply.message}`));
      this.child.kill();
    } else {
      const job = this.current;
      this.current = undefined;
      this.setKeepsParentAlive(false);
      if (reply.type === "result") job?.resolve(reply.vectors);
      else job?.reject(new Error(`${this.label} embedding failed: ${reply.message}`));
      this.pull();
    }
  }

  private die(err: Error): void {
    if (this.dead) return;
    this.dead = true;
    this.settleReady.reject(err);
    const job = this.current;
    this.current = undefined;
    this.onDeath(this, job, err, this.loaded);
  }
}

/** A local model's processes as configured (EMBEDDING_BATCH_SIZE, _WORKERS, _THREADS, _NICENESS). */
export interface LocalModelOptions {
  batchSize: number;
  /** Model processes; each holds its own copy of the model and embeds one batch at a time. Default 1. */
  workers?: number;
  /** Threads each process runs one batch on. Default 1. */
  threads?: number;
  /**
   * How much nicer than the server the processes run (0, the default: as nice as it). Raised, a bulk
   * embedding yields the cores to the server's threads, so recalls during an ingest are not queued behind the model.
   */
  niceness?: number;
}

export interface ModelProcessOptions extends LocalModelOptions {
  /** Characters of a text the model reads; a longer one is embedded by its beginning. */
  maxChars: number;
  /** What a process loads: called for each one started, replacements included. */
  load: () => Promise<LoadMessage>;
}

/**
 * An embedding model in child processes, so the event loop stays free: one queue, shortest call first,
 * batches sized by the traffic, concurrent single texts run together, crashed processes replaced.
 */
export class ModelProcessEmbedder implements Embedder {
  info: EmbeddingModelInfo;

  private readonly queue: Job[] = [];
  private readonly pool: ModelProcess[];
  /** Batches handed to the model processes so far (tests read it). */
  modelCalls = 0;
  private lastSingleTextCall = -Infinity;
  private failure: Error | undefined;
  /** Dead processes not yet exited (one that failed to load is killed): close() waits for them too. */
  private readonly exiting = new Set<Promise<number | null>>();

  protected constructor(
    identity: Omit<EmbeddingModelInfo, "dimensions">,
    private readonly options: ModelProcessOptions,
  ) {
    this.info = { ...identity, dimensions: 0 };
    this.pool = Array.from({ length: options.workers ?? 1 }, () => this.spawn());
  }

  /** Waits until every process has loaded the model, and learns its dimensions; closes on failure. */
  protected async started(): Promise<void> {
    try {
      const [dimensions] = await Promise.all(this.pool.map((p) => p.ready));
      this.info = { ...this.info, dimensions: dimensions! };
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  private spawn(): ModelProcess {
    return new ModelProcess(
      this.info.provider,
      this.options.load(),
      this.options.niceness ?? 0,
      () => this.takeJob(),
      (process, job, err, loaded) => this.replace(process, job, err, loaded),
    );
  }

  /**
   * A model process died (a crash, or out of memory): its job runs once more on another process, and
   * a fresh process takes its place. One that dies before it has loaded the model is not replaced, so
   * a model that cannot load does not respawn forever; with no processes left the embedder fails.
   */
  private replace(dead: ModelProcess, job: Job | undefined, err: Error, loaded: boolean): void {
    if (job) {
      if (this.failure) job.reject(this.failure);
      else if (job.retried) job.reject(new Error(`${this.info.provider} embedding failed: the model process died twice while embedding this batch (${err.message})`));
      else {
        job.retried = true;
        this.queue.unshift(job);
      }
    }
    this.exiting.add(dead.exited);
    void dead.exited.then(() => this.exiting.delete(dead.exited));
    if (this.failure) return;
    const at = this.pool.indexOf(dead);
    if (loaded) this.pool.splice(at, 1, this.spawn());
    else this.pool.splice(at, 1);
    if (this.pool.length === 0) this.fail(new Error(`${this.info.provider} model processes cannot start: ${err.message}`));
    for (const p of this.pool) p.pull();
  }

  /**
   * The next job. Single-text calls waiting together (concurrent recalls' queries) run as one batch, up to
   * the interactive batch's padded characters: one model call costs less per text than several (about 5.4
   * ms of CPU a sentence alone, 4.2 in calls of 8). A job put back after a crash runs alone.
   */
  private takeJob(): Job | undefined {
    const job = this.coalescedJob();
    if (job !== undefined) this.modelCalls++;
    return job;
  }

  private coalescedJob(): Job | undefined {
    const first = this.queue.shift();
    if (first === undefined || first.callSize !== 1 || first.retried) return first;
    const jobs = [first];
    let longest = first.texts[0]!.length;
    for (let next = this.queue[0]; next !== undefined && next.callSize === 1 && !next.retried && jobs.length < this.options.batchSize; next = this.queue[0]) {
      const padded = Math.max(longest, next.texts[0]!.length);
      if ((jobs.length + 1) * padded > batchChars.interactive) break;
      longest = padded;
      jobs.push(this.queue.shift()!);
    }
    if (jobs.length === 1) return first;
    return {
      texts: jobs.map((j) => j.texts[0]!),
      callSize: 1,
      retried: false,
      resolve: (vectors) => jobs.forEach((j, i) => j.resolve([vectors[i]!])),
      reject: (err) => jobs.forEach((j) => j.reject(err)),
    };
  }

  /** The model processes' ids (tests read their priority). */
  processIds(): Array<number | undefined> {
    return this.pool.map((p) => p.pid);
  }

  /** Test hook: kills a model process the way a crash would. */
  crashWorker(index: number): Promise<number | null> {
    return this.pool[index]!.terminate(true);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 1) this.lastSingleTextCall = performance.now();
    const clipped = texts.map((t) => t.slice(0, this.options.maxChars));
    const batches = this.batches(clipped);
    const results = await Promise.all(batches.map((batch) => this.schedule(batch.map((i) => clipped[i]!), texts.length)));
    const out = new Array<Float32Array>(texts.length);
    batches.forEach((batch, b) => batch.forEach((textIndex, k) => (out[textIndex] = results[b]![k]!)));
    return out;
  }

  /** Batches of a call: small while single-text calls keep coming, enough for every process to help. */
  private batches(texts: string[]): number[][] {
    const interactive = performance.now() - this.lastSingleTextCall < interactiveMs;
    const maxTexts = Math.min(this.options.batchSize, Math.ceil(texts.length / this.pool.length));
    return batchesByLength(texts, maxTexts, interactive ? batchChars.interactive : batchChars.bulk);
  }

  async close(): Promise<void> {
    this.fail(new Error(`${this.info.provider} embedder is closed`));
    await Promise.all([...this.pool.map((p) => p.terminate()), ...this.exiting]);
  }

  private schedule(texts: string[], callSize: number): Promise<Float32Array[]> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      // Shortest call first: a recall query or single write waits for at most one running batch,
      // not for a whole bulk ingest queued before it.
      const at = this.queue.findIndex((job) => job.callSize > callSize);
      this.queue.splice(at === -1 ? this.queue.length : at, 0, { texts, callSize, retried: false, resolve, reject });
      for (const p of this.pool) p.pull();
    });
  }

  /** close(), or the loss of every process, ends the embedder: queued and later calls fail with the reason. */
  private fail(err: Error): Error {
    this.failure ??= err;
    for (const job of this.queue.splice(0)) job.reject(this.failure);
    return this.failure;
  }
}
