import { getPriority } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UseLiteEmbedder } from "../../src/embeddings/use-lite-embedder.js";
import { rest, startTestServer, type TestServer } from "../support/test-server.js";

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

// Each sentence and a paraphrase of it with different wording; the rest of the list are distractors.
const paraphrases: Array<[string, string]> = [
  ["The user prefers dark mode in every editor", "Always use a dark theme for this person's IDE"],
  ["Deploys to production happen every Tuesday", "We ship to prod once a week on Tuesdays"],
  ["The database password rotates every 90 days", "Credentials for the DB are changed quarterly"],
  ["Run the test suite before opening a pull request", "Make sure tests pass prior to submitting a PR"],
  ["The cat sits on the mat", "A cat is sitting on a rug"],
  ["Quarterly revenue grew 8%", "Sales for the quarter were up eight percent"],
  ["The API returns 429 when the rate limit is exceeded", "Too many requests get a rate-limited response from the API"],
  ["She is allergic to peanuts", "Peanuts cause her an allergic reaction"],
  ["The meeting was moved to Thursday afternoon", "We rescheduled the meeting for Thursday after lunch"],
  ["Use tabs, not spaces, for indentation", "Indent code with tab characters instead of spaces"],
  ["The server crashed because it ran out of memory", "An out-of-memory error brought the server down"],
  ["He lives in Berlin and works remotely", "His home is in Berlin and he works from home"],
  ["The invoice must be paid within thirty days", "Payment of the bill is due in 30 days"],
  ["Backups are stored in an S3 bucket in Frankfurt", "We keep backup copies in Amazon storage in Germany"],
  ["The flight to Tokyo was delayed by three hours", "Our plane to Japan left three hours late"],
  ["Do not commit secrets to the repository", "Never check API keys or passwords into git"],
  ["The project uses PostgreSQL 15 as its database", "Postgres version 15 is the datastore for this project"],
  ["My favourite food is spicy Thai curry", "I love hot Thai curries more than any other dish"],
  ["The build fails on Windows because of path separators", "Backslashes in file paths break the Windows build"],
  ["The dog barked all night and kept us awake", "We couldn't sleep because the dog was barking"],
];

let embedder: UseLiteEmbedder;

beforeAll(async () => {
  embedder = await UseLiteEmbedder.create({ batchSize: 8, workers: 2 });
});

afterAll(() => embedder?.close());

describe("UseLiteEmbedder", () => {
  it("describes its model", () => {
    expect(embedder.info).toEqual({ provider: "use-lite", model: "universal-sentence-encoder-lite", dimensions: 512 });
  });

  it("embeds a batch into 512-d unit vectors in input order", async () => {
    const [cat, rug, revenue] = await embedder.embed([
      "The cat sits on the mat",
      "A cat is sitting on a rug",
      "Quarterly revenue grew 8%",
    ]);
    for (const v of [cat!, rug!, revenue!]) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v).toHaveLength(512);
      expect(Math.sqrt(dot(v, v))).toBeCloseTo(1, 5);
    }
    expect(dot(cat!, rug!)).toBeGreaterThan(dot(cat!, revenue!) + 0.3);
  });

  it("embeds a text the same alone and inside a batch of varied lengths", async () => {
    const texts = paraphrases.flat();
    const batched = await embedder.embed(texts);
    for (const i of [0, 7, 23, 39]) {
      const [alone] = await embedder.embed([texts[i]!]);
      const maxDiff = Math.max(...alone!.map((x, d) => Math.abs(x - batched[i]![d]!)));
      expect(maxDiff).toBeLessThan(1e-5);
    }
  });

  it("returns [] for no texts", async () => {
    expect(await embedder.embed([])).toEqual([]);
  });

  it("handles empty and very long texts", async () => {
    const [empty, long] = await embedder.embed(["", "memory ".repeat(5000)]);
    expect(empty).toHaveLength(512);
    expect(Math.sqrt(dot(long!, long!))).toBeCloseTo(1, 5);
  });

  it("finds the paraphrase at rank 1 for at least 17 of 20 pairs", async () => {
    const left = await embedder.embed(paraphrases.map(([a]) => a));
    const right = await embedder.embed(paraphrases.map(([, b]) => b));
    const hits = left.filter((a, i) => {
      const scores = right.map((b) => dot(a, b));
      return scores.indexOf(Math.max(...scores)) === i;
    }).length;
    expect(hits).toBeGreaterThanOrEqual(17);
  });

  it("serves a query queued behind a bulk call before the bulk call finishes", async () => {
    const single = await UseLiteEmbedder.create({ batchSize: 4, workers: 1 });
    try {
      const finished: string[] = [];
      const bulk = single.embed(paraphrases.flat()).then(() => finished.push("bulk"));
      const query = single.embed(["where are backups stored?"]).then(() => finished.push("query"));
      await Promise.all([bulk, query]);
      expect(finished).toEqual(["query", "bulk"]);
    } finally {
      await single.close();
    }
  });

  it("runs single-text calls that wait together as one batch, with the vectors each gets alone", async () => {
    const single = await UseLiteEmbedder.create({ batchSize: 8, workers: 1 });
    try {
      const queries = ["where are backups stored?", "who is the user's manager?", "which editor theme?", "when do deploys happen?", "what database?", "is the cat on the mat?"];
      const alone: Float32Array[] = [];
      for (const q of queries) alone.push((await single.embed([q]))[0]!);
      const before = single.modelCalls;
      // One batch of two texts holds the process; the six queries, queued in the same tick, wait behind it.
      const blocker = single.embed(["a".repeat(200), "b".repeat(200)]);
      const together = await Promise.all(queries.map((q) => single.embed([q])));
      await blocker;
      expect(single.modelCalls - before).toBe(2);
      together.forEach(([v], i) => expect(Math.max(...v!.map((x, d) => Math.abs(x - alone[i]![d]!)))).toBeLessThan(1e-5));
    } finally {
      await single.close();
    }
  });

  it("fails cleanly after close", async () => {
    const closing = await UseLiteEmbedder.create({ batchSize: 4, workers: 1 });
    await closing.close();
    await expect(closing.embed(["late"])).rejects.toThrow(/closed/);
  });
});

/** The process in a pool slot, to wait until a replacement has loaded (it takes the retried job at once). */
const slot = (e: UseLiteEmbedder, i: number) => (e as unknown as { pool: Array<{ ready: Promise<void> }> }).pool[i]!;

describe("a crashed model process", () => {
  it("is replaced at the same niceness: the batch it was running is retried on the fresh process and queued calls go on", async () => {
    const crashing = await UseLiteEmbedder.create({ batchSize: 4, workers: 1, niceness: 5 });
    try {
      const [first] = crashing.processIds();
      expect(getPriority(first!)).toBe(Math.min(19, getPriority() + 5));
      const texts = paraphrases.map(([a]) => a);
      const before = await embedder.embed(texts);
      // One process: the first call is running on it when it dies, the others wait in the queue.
      const stream = texts.map((t) => crashing.embed([t]));
      await crashing.crashWorker(0);
      const after = (await Promise.all(stream)).map(([v]) => v!);
      after.forEach((v, i) => expect(dot(v, before[i]!)).toBeCloseTo(1, 4));
      expect((await crashing.embed(["still working"]))[0]).toHaveLength(512);
      const [replacement] = crashing.processIds();
      expect(replacement).not.toBe(first);
      expect(getPriority(replacement!)).toBe(Math.min(19, getPriority() + 5));
    } finally {
      await crashing.close();
    }
  });

  it("fails a batch with a clear error when its process dies a second time, and keeps serving", async () => {
    const crashing = await UseLiteEmbedder.create({ batchSize: 4, workers: 1 });
    try {
      // A batch that takes its process tens of milliseconds: the replacement is killed just after it took
      // the batch, and with a one-line batch a loaded machine let it answer first (the test continued
      // 4.6 ms after the batch was sent even unloaded).
      const doomed = crashing.embed(["a batch that kills two workers ", "and takes a while "].map((t) => t.repeat(2_000 / t.length)));
      await crashing.crashWorker(0);
      await slot(crashing, 0).ready;
      await crashing.crashWorker(0);
      await expect(doomed).rejects.toThrow(/died twice/);
      expect((await crashing.embed(["the next call"]))[0]).toHaveLength(512);
    } finally {
      await crashing.close();
    }
  });
});

describe("recall while a model process crashes", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("pglite");
  });
  afterAll(() => server?.close());

  it("keeps answering 200 over REST", async () => {
    const agent = rest(server.url, await server.createKey("acme", "agent-1"));
    await agent("POST", "/api/v1/agent/memories", { content: "The release train leaves every second Wednesday", type: "fact" });
    // Distinct queries: each one is embedded, none is answered from the query cache.
    const recalls = Array.from({ length: 16 }, (_, i) =>
      agent("POST", "/api/v1/agent/recall", { query: `when does release train number ${i} leave`, limit: 3 }).then((r) => r.status),
    );
    // Once one recall has been answered the others are being embedded or queued for the model.
    await Promise.race(recalls);
    await (server.app.model as UseLiteEmbedder).crashWorker(0);
    expect(await Promise.all(recalls)).toEqual(recalls.map(() => 200));
    const later = await agent("POST", "/api/v1/agent/recall", { query: "release schedule", limit: 3 });
    expect(later.status).toBe(200);
  });
});
