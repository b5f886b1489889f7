import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { fileURLToPath } from "node:url";
import { CallFailure } from "./closed-loop.js";

// A client built from the .proto files with grpc-js, as a polyglot client would be: it shares no code
// with the server, and goes through the one-port HTTP/2 (h2c) path like any gRPC client.

const protoDir = fileURLToPath(new URL("../../proto", import.meta.url));

type Callback = (err: grpc.ServiceError | null, res?: unknown) => void;
type Unary = (req: object, metadata: grpc.Metadata, options: grpc.CallOptions, cb: Callback) => void;
type MemoryServiceClient = grpc.Client & { createMemories: Unary; getMemory: Unary };

export interface MemoryGrpc {
  createMemories(req: object): Promise<unknown>;
  getMemory(req: object): Promise<unknown>;
  close(): void;
}

const callTimeoutMs = 30_000;

/** A MemoryService client on one HTTP/2 connection, authenticating every call with `key`. */
export function memoryGrpcClient(baseUrl: string, key: string): MemoryGrpc {
  const definition = protoLoader.loadSync("agent/v1/memory.proto", {
    includeDirs: [protoDir],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const agentV1 = (grpc.loadPackageDefinition(definition) as any).agent.v1;
  const client: MemoryServiceClient = new agentV1.MemoryService(new URL(baseUrl).host, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${key}`);

  const call = (method: Unary, req: object) =>
    new Promise<unknown>((resolve, reject) => {
      method.call(client, req, metadata, { deadline: Date.now() + callTimeoutMs }, (err, res) =>
        err ? reject(new CallFailure(`gRPC ${grpc.status[err.code]}`)) : resolve(res),
      );
    });
  return {
    createMemories: (req) => call(client.createMemories, req),
    getMemory: (req) => call(client.getMemory, req),
    close: () => client.close(),
  };
}

type RecallServiceClient = grpc.Client & { recall: Unary };

export interface RecallGrpc {
  recall(req: object): Promise<unknown>;
  close(): void;
}

/** A RecallService client on one HTTP/2 connection, authenticating every call with `key`. */
export function recallGrpcClient(baseUrl: string, key: string): RecallGrpc {
  const definition = protoLoader.loadSync("agent/v1/recall.proto", {
    includeDirs: [protoDir],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const agentV1 = (grpc.loadPackageDefinition(definition) as any).agent.v1;
  const client: RecallServiceClient = new agentV1.RecallService(new URL(baseUrl).host, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${key}`);
  return {
    recall: (req) =>
      new Promise<unknown>((resolve, reject) => {
        client.recall(req, metadata, { deadline: Date.now() + callTimeoutMs }, (err, res) =>
          err ? reject(new CallFailure(`gRPC ${grpc.status[err.code]}`)) : resolve(res),
        );
      }),
    close: () => client.close(),
  };
}
