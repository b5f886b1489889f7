import { setTimeout as sleep } from "node:timers/promises";
import type { Embedder, EmbeddingModelInfo } from "./embedder.js";
import { normalize } from "./normalize.js";

export interface OpenAiOptions {
  /** Base URL, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1; /embeddings is appended. */
  url: string;
  model: string;
  apiKey?: string;
  /** Requested from the API when set; otherwise learned from a probe request at creation. */
  dimensions?: number;
  batchSize: number;
  timeoutMs?: number;
  /** First retry delay; doubles on each retry. */
  retryDelayMs?: number;
}

interface EmbeddingsResponse {
  data?: Array<{ index?: number; embedding?: unknown }>;
}

const maxAttempts = 3;
const maxRetryAfterMs = 10_000;
const excerptChars = 300;

const retryable = (status: number) => status === 429 || status >= 500;

/** Any OpenAI-compatible POST /embeddings API: OpenAI, Ollama /v1, vLLM, TEI. */
export class OpenAiEmbedder implements Embedder {
  private readonly endpoint: string;
  private readonly timeoutMs: number;
  private readonly retryDelayMs: number;

  private constructor(
    private readonly options: OpenAiOptions,
    public readonly info: EmbeddingModelInfo,
  ) {
    this.endpoint = `${options.url.replace(/\/+$/, "")}/embeddings`;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retryDelayMs = options.retryDelayMs ?? 500;
  }

  static async create(options: OpenAiOptions): Promise<OpenAiEmbedder> {
    const info: EmbeddingModelInfo = { provider: "openai", model: options.model, dimensions: options.dimensions ?? 0 };
    const embedder = new OpenAiEmbedder(options, info);
    if (options.dimensions === undefined) {
      const [probe] = await embedder.request(["dimension probe"]);
      info.dimensions = probe!.length;
    }
    return embedder;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.options.batchSize) {
      const vectors = await this.request(texts.slice(i, i + this.options.batchSize));
      for (const v of vectors) {
        if (v.length !== this.info.dimensions) {
          throw new Error(`${this.endpoint} returned ${v.length}-d vectors, expected ${this.info.dimensions} (EMBEDDING_DIMENSIONS)`);
        }
        out.push(v);
      }
    }
    return out;
  }

  async close(): Promise<void> {}

  private async request(input: string[]): Promise<Float32Array[]> {
    const body = JSON.stringify({
      model: this.options.model,
      input,
      ...(this.options.dimensions === undefined ? {} : { dimensions: this.options.dimensions }),
    });
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;

    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await fetch(this.endpoint, {
          method: "POST",
          headers,
          body,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (err) {
        // A timeout already waited long enough; connection failures are worth another try.
        const timedOut = err instanceof DOMException && err.name === "TimeoutError";
        if (timedOut || attempt >= maxAttempts) {
          const reason = timedOut ? `timed out after ${this.timeoutMs} ms` : (err as Error).message;
          throw new Error(`embedding request to ${this.endpoint} failed: ${reason}`, { cause: err });
        }
        await sleep(this.backoff(attempt));
        continue;
      }
      if (response.ok) return this.parse((await response.json()) as EmbeddingsResponse, input.length);
      const text = await response.text().catch(() => "");
      if (!retryable(response.status) || attempt >= maxAttempts) {
        throw new Error(
          `embedding request to ${this.endpoint} failed: HTTP ${response.status} after ${attempt} attempt(s): ${this.excerpt(text)}`,
        );
      }
      await sleep(this.backoff(attempt, response.headers.get("retry-after")));
    }
  }

  private parse(json: EmbeddingsResponse, expected: number): Float32Array[] {
    const data = json.data;
    if (!Array.isArray(data) || data.length !== expected) {
      throw new Error(`${this.endpoint} returned ${Array.isArray(data) ? data.length : "no"} embeddings for ${expected} inputs`);
    }
    const out = new Array<Float32Array>(expected);
    data.forEach((item, position) => {
      const index = item.index ?? position;
      if (!Array.isArray(item.embedding) || out[index] !== undefined || index < 0 || index >= expected) {
        throw new Error(`${this.endpoint} returned a malformed embedding at index ${index}`);
      }
      out[index] = normalize(Float32Array.from(item.embedding as number[]));
    });
    return out;
  }

  private backoff(attempt: number, retryAfter?: string | null): number {
    const seconds = Number(retryAfter);
    if (retryAfter && Number.isFinite(seconds)) return Math.min(seconds * 1000, maxRetryAfterMs);
    return this.retryDelayMs * 2 ** (attempt - 1);
  }

  /** Error bodies can echo the request's key (some APIs quote it), so it is redacted. */
  private excerpt(text: string): string {
    const { apiKey } = this.options;
    const clean = apiKey ? text.replaceAll(apiKey, "[redacted]") : text;
    return clean.length > excerptChars ? `${clean.slice(0, excerptChars)}…` : clean || "(empty body)";
  }
}
