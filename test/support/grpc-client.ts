import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

// An independent gRPC client (grpc-js + proto-loader) built from our .proto files, as a polyglot
// client generated from the protos would be: it shares no code with the server.

const definition = protoLoader.loadSync(["agent/v1/memory.proto", "agent/v1/recall.proto", "agent/v1/admin.proto"], {
  includeDirs: ["proto"],
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const agentV1 = (grpc.loadPackageDefinition(definition) as any).agent.v1;

/** Calls a method; `metadata` adds request metadata (e.g. idempotency-key). */
export type GrpcCall = (method: string, request: object, metadata?: Record<string, string>) => Promise<Record<string, unknown>>;

export interface GrpcClient {
  call: GrpcCall;
  close(): void;
}

/** A gRPC client for one service, authenticating every call with `key`. */
export function grpcClient(baseUrl: string, service: "MemoryService" | "RecallService" | "AdminService", key: string): GrpcClient {
  const client = new agentV1[service](new URL(baseUrl).host, grpc.credentials.createInsecure());
  return {
    call: (method, request, extra = {}) =>
      new Promise((resolve, reject) => {
        const metadata = new grpc.Metadata();
        metadata.set("authorization", `Bearer ${key}`);
        for (const [name, value] of Object.entries(extra)) metadata.set(name, value);
        client[method](request, metadata, (err: grpc.ServiceError | null, res: Record<string, unknown>) =>
          err ? reject(err) : resolve(res),
        );
      }),
    close: () => client.close(),
  };
}

export { grpc };
