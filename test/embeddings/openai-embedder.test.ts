import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { OpenAiEmbedder, type OpenAiOptions } from "../../src/embeddings/openai-embedder.js";

const apiKey = "sk-test-secret-key-123";
const nativeDims = 12;

/** Deterministic, deliberately not unit-length vectors, so normalisation is observable. */
function hashVector(text: string, dims: number): number[] {
  const digest = createHash("sha256").update(text).digest();
  return Array.from({ length: dims }, (_, i) => (digest[i % digest.length]! - 128) / 16);
}

interface Recorded {
  authorization: string | undefined;
  body: { model: string; input: string[]; dimensions?: number };
}

// A local OpenAI-compatible server. `failures` lists statuses to answer before succeeding again.
let server: Server;
let baseUrl: string;
let requests: Recorded[] = [];
let failures: number[] = [];

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body = JSON.parse(await readBody(req)) as Recorded["body"];
    requests.push({ authorization: req.headers.authorization, body });
    const failure = failures.shift();
    if (req.url !== "/v1/embeddings" || req.method !== "POST") {
      res.writeHead(404).end("not found");
    } else if (failure !== undefined) {
      res.writeHead(failure, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `upstream broke; you sent ${req.headers.authorization}` } }));
    } else {
      const dims = body.dimensions ?? nativeDims;
      const data = body.input.map((text, index) => ({ object: "embedding", index, embedding: hashVector(text, dims) }));
      res.writeHead(200, { "content-type": "application/json" });
      // Reversed on purpose: clients must order by `index`, not by position.
      res.end(JSON.stringify({ object: "list", model: body.model, data: data.reverse() }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  requests = [];
  failures = [];
});

const options = (extra: Partial<OpenAiOptions> = {}): OpenAiOptions => ({
  url: baseUrl,
  model: "test-embed",
  apiKey,
  batchSize: 3,
  retryDelayMs: 1,
  ...extra,
});

const norm = (v: Float32Array) => Math.hypot(...v);

describe("OpenAiEmbedder", () => {
  it("detects dimensions with one probe request when not configured", async () => {
    const embedder = await OpenAiEmbedder.create(options());
    expect(embedder.info).toEqual({ provider: "openai", model: "test-embed", dimensions: nativeDims });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.body.dimensions).toBeUndefined();
  });

  it("sends configured dimensions and skips the probe", async () => {
    const embedder = await OpenAiEmbedder.create(options({ dimensions: 6 }));
    expect(requests).toHaveLength(0);
    const [v] = await embedder.embed(["hello"]);
    expect(v).toHaveLength(6);
    expect(embedder.info.dimensions).toBe(6);
    expect(requests[0]!.body.dimensions).toBe(6);
  });

  it("batches, authenticates, orders by index and normalises", async () => {
    const embedder = await OpenAiEmbedder.create(options({ dimensions: nativeDims }));
    const texts = ["one", "two", "three", "four", "five", "six", "seven"];
    const vectors = await embedder.embed(texts);

    expect(requests.map((r) => r.body.input)).toEqual([["one", "two", "three"], ["four", "five", "six"], ["seven"]]);
    for (const r of requests) {
      expect(r.authorization).toBe(`Bearer ${apiKey}`);
      expect(r.body.model).toBe("test-embed");
    }
    vectors.forEach((v, i) => {
      expect(norm(v)).toBeCloseTo(1, 5);
      const raw = hashVector(texts[i]!, nativeDims);
      const rawNorm = Math.hypot(...raw);
      raw.forEach((x, d) => expect(v[d]).toBeCloseTo(x / rawNorm, 5));
    });
  });

  it("omits the Authorization header without a key", async () => {
    const embedder = await OpenAiEmbedder.create(options({ apiKey: undefined, dimensions: 4 }));
    await embedder.embed(["x"]);
    expect(requests[0]!.authorization).toBeUndefined();
  });

  it("returns [] for no texts without calling the API", async () => {
    const embedder = await OpenAiEmbedder.create(options({ dimensions: 4 }));
    expect(await embedder.embed([])).toEqual([]);
    expect(requests).toHaveLength(0);
  });

  it("retries after a 503 and then succeeds", async () => {
    const embedder = await OpenAiEmbedder.create(options({ dimensions: 4 }));
    failures = [503];
    const [v] = await embedder.embed(["retry me"]);
    expect(requests).toHaveLength(2);
    expect(norm(v!)).toBeCloseTo(1, 5);
  });

  it("gives up after three 500s with the status and no API key in the error", async () => {
    const embedder = await OpenAiEmbedder.create(options({ dimensions: 4 }));
    failures = [500, 500, 500];
    const err = (await embedder.embed(["doomed"]).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(requests).toHaveLength(3);
    expect(err.message).toContain("HTTP 500");
    expect(err.message).toContain("upstream broke");
    expect(err.message).not.toContain(apiKey);
  });

  it("does not retry a 400", async () => {
    const embedder = await OpenAiEmbedder.create(options({ dimensions: 4 }));
    failures = [400];
    await expect(embedder.embed(["bad"])).rejects.toThrow(/HTTP 400/);
    expect(requests).toHaveLength(1);
  });

  it("reports an unreachable server clearly at creation", async () => {
    await expect(OpenAiEmbedder.create(options({ url: "http://127.0.0.1:1/v1" }))).rejects.toThrow(
      /embedding request to http:\/\/127\.0\.0\.1:1\/v1\/embeddings failed/,
    );
  });
});
