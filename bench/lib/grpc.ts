import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { fileURLToPath } from "node:url";
import { CallFailure } from "./closed-loop.js";

// A client built from the .proto files with grpc-js, as a polyglot client would be: it shares no code
// with the server, and goes through the one-port HTTP/2 (h2c) path like any gRPC client.

const protoDir = fileURLToPath(new URL("../../proto", import.meta.url));

type Callback = (err: grpc.ServiceError | null, res?: unknown) => void;
type Unary = (req: object, metadata: grpc.Metadata, options: grpc.CallOptions, cb: Callback) => void;

const callTimeoutMs = 30_000;

/** A client of one agent.v1 service on one HTTP/2 connection, authenticating every call with `key`. */
function serviceClient(baseUrl: string, protoFile: string, service: string, key: string) {
  const definition = protoLoader.loadSync(protoFile, {
    includeDirs: [protoDir],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const agentV1 = (grpc.loadPackageDefinition(definition) as any).agent.v1;
  const client: grpc.Client & Record<string, Unary> = new agentV1[service](new URL(baseUrl).host, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${key}`);
  return {
    call: (method: string, req: object) =>
      new Promise<unknown>((resolve, reject) => {
        client[method]!.call(client, req, metadata, { deadline: Date.now() + callTimeoutMs }, (err, res) =>
          err ? reject(new CallFailure(`gRPC ${grpc.status[err.code]}`)) : resolve(res),
        );
      }),
    close: () => client.close(),
  };
}

export interface MemoryGrpc {
  createMemories(req: object): Promise<unknown>;
  getMemory(req: object): Promise<unknown>;
  close(): void;
}

export function memoryGrpcClient(baseUrl: string, key: string): MemoryGrpc {
  const client = serviceClient(baseUrl, "agent/v1/memory.proto", "MemoryService", key);
  return {
    createMemories: (req) => client.call("createMemories", req),
    getMemory: (req) => client.call("getMemory", req),
    close: client.close,
  };
}

export interface RecallGrpc {
  recall(req: object): Promise<unknown>;
  close(): void;
}

export function recallGrpcClient(baseUrl: string, key: string): RecallGrpc {
  const client = serviceClient(baseUrl, "agent/v1/recall.proto", "RecallService", key);
  return { recall: (req) => client.call("recall", req), close: client.close };
}
