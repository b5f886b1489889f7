import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

// An OpenAI-compatible embeddings endpoint serving bag-of-words vectors: each word adds one to a
// dimension chosen by its hash. A text is its own nearest neighbour (cosine 1) and texts sharing words
// are near, which is all tests about storage and nodes need; a node using it (EMBEDDING_PROVIDER=openai)
// starts without loading a model, in tens of milliseconds.

const dimensions = 64;

function bagOfWords(text: string): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  // A constant component keeps a text without words off the zero vector, which has no direction.
  vector[0] = 0.1;
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    vector[createHash("sha1").update(word).digest().readUInt16BE(0) % dimensions]! += 1;
  }
  return vector;
}

export interface HashEmbeddingServer {
  /** The settings that make a node use this endpoint. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function hashEmbeddingServer(): Promise<HashEmbeddingServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const { input } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { input: string[] };
      const data = input.map((text, index) => ({ object: "embedding", index, embedding: bagOfWords(text) }));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    env: {
      EMBEDDING_PROVIDER: "openai",
      EMBEDDING_URL: `http://127.0.0.1:${port}/v1`,
      EMBEDDING_MODEL: "bag-of-words",
      EMBEDDING_DIMENSIONS: String(dimensions),
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
