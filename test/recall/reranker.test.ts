import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRerankScores } from "../../src/recall/reranker.js";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

describe("rerank answers", () => {
  it("reads the TEI, Cohere/Jina/vLLM shapes in input order", () => {
    expect(Array.from(parseRerankScores([{ index: 1, score: 0.2 }, { index: 0, score: 0.9 }], 2)!)).toEqual([0.9, 0.2]);
    expect(Array.from(parseRerankScores({ results: [{ index: 0, relevance_score: 0.1 }, { index: 1, relevance_score: 0.7 }] }, 2)!)).toEqual([0.1, 0.7]);
    expect(Array.from(parseRerankScores({ data: [{ index: 0, score: -3 }] }, 1)!)).toEqual([-3]);
  });

  it("refuses answers that do not score every document exactly once", () => {
    expect(parseRerankScores([{ index: 0, score: 0.5 }], 2)).toBeNull();
    expect(parseRerankScores([{ index: 0, score: 0.5 }, { index: 0, score: 0.4 }], 2)).toBeNull();
    expect(parseRerankScores([{ index: 2, score: 0.5 }, { index: 0, score: 0.4 }], 2)).toBeNull();
    expect(parseRerankScores([{ index: 0, score: "high" }], 1)).toBeNull();
    expect(parseRerankScores({ error: "overloaded" }, 1)).toBeNull();
    expect(parseRerankScores(null, 1)).toBeNull();
  });
});

const corpus = [
  "The user prefers dark mode in every editor",
  "The user prefers light mode on the phone",
  "The user likes a dark theme in the terminal",
  "Deploys to production happen on Tuesday mornings",
];

/** A reranker on a loopback port: answers as TEI, as Cohere, with an error, or not at all. */
function fakeReranker() {
  let behaviour: "tei" | "cohere" | "error" | "silent" = "tei";
  const requests: Array<Record<string, unknown>> = [];
  const held: ServerResponse[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      const request = JSON.parse(body) as { documents: string[]; authorization?: string };
      requests.push({ ...request, authorization: req.headers.authorization, path: req.url });
      // Scores favour the memory about the phone, then the others in reverse input order.
      const scored = request.documents.map((d, index) => ({ index, score: d.includes("phone") ? 10 : index }));
      if (behaviour === "silent") return void held.push(res);
      if (behaviour === "error") return void res.writeHead(503).end("busy");
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(behaviour === "tei" ? scored : { results: scored.map((s) => ({ index: s.index, relevance_score: s.score })) }));
    });
  });
  return {
    requests,
    set: (b: typeof behaviour) => (behaviour = b),
    listen: () => new Promise<string>((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/rerank`))),
    close: () => {
      for (const res of held) res.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each(backends)("recall with a reranker (%s)", (backend) => {
  const reranker = fakeReranker();
  let server: TestServer;
  let agent: ReturnType<typeof rest>;
  const recall = async () => {
    const res = await agent("POST", "/api/v1/agent/recall", { query: "which theme does the user like?", limit: 3 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { memories: Array<{ content: string; why: { rerankApplied: boolean; rerankScore?: number } }>; receipt: { rerankApplied: boolean } };
  };

  beforeAll(async () => {
    const url = await reranker.listen();
    server = await startTestServer(backend, { RERANK_URL: url, RERANK_MODEL: "bge-reranker-base", RERANK_API_KEY: "rerank-secret", RERANK_TIMEOUT_MS: "300", RERANK_CANDIDATES: "3" });
    agent = rest(server.url, await server.createKey("acme", "agent-1"));
    await agent("POST", "/api/v1/agent/memories", { memories: corpus.map((content) => ({ content, type: "preference" })) });
    await server.app.indexer.drain();
  });
  afterAll(async () => {
    await server?.close();
    await reranker.close();
  });

  it("orders the best fused candidates by the reranker's scores, and says so", async () => {
    for (const shape of ["tei", "cohere"] as const) {
      reranker.set(shape);
      const body = await recall();
      expect(body.receipt.rerankApplied).toBe(true);
      expect(body.memories[0]!.content).toBe(corpus[1]);
      expect(body.memories.every((m) => m.why.rerankApplied)).toBe(true);
      expect(body.memories[0]!.why.rerankScore).toBe(10);
    }
    const last = reranker.requests.at(-1)!;
    expect(last).toMatchObject({ model: "bge-reranker-base", query: "which theme does the user like?", top_n: 3, authorization: "Bearer rerank-secret", path: "/rerank" });
    expect(last.texts).toEqual(last.documents);
    expect(last.documents).toHaveLength(3);
  });

  it("keeps the fused order when the reranker fails or does not answer in time", async () => {
    reranker.set("error");
    const failed = await recall();
    expect(failed.receipt.rerankApplied).toBe(false);
    expect(failed.memories.some((m) => m.why.rerankApplied)).toBe(false);
    expect(failed.memories[0]!.why).not.toHaveProperty("rerankScore");
    // The fused order differs from the reranked one, so the reranked answers above came from the reranker.
    expect(failed.memories[0]!.content).not.toBe(corpus[1]);

    reranker.set("silent");
    const before = reranker.requests.length;
    const slow = await recall();
    expect(reranker.requests.length).toBe(before + 1);
    expect(slow.receipt.rerankApplied).toBe(false);
    expect(slow.memories.map((m) => m.content)).toEqual(failed.memories.map((m) => m.content));
  });
});
