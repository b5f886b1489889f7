import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

// An independent gRPC client (grpc-js + proto-loader) built from our .proto files, as a polyglot
// client generated from the protos would be: it shares no code with the server.

const definition = protoLoader.loadSync(["agent/v1/memory.proto", "agent/v1/recall.proto", "agent/v1/admin.proto", "agent/v1/stats.proto", "agent/v1/skill.proto", "agent/v1/marketplace.proto", "agent/v1/moderation.proto"], {
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

/** A unary call's outcome with its response headers and trailers. */
export interface GrpcOutcome {
  response?: Record<string, unknown>;
  error?: grpc.ServiceError;
  headers: grpc.Metadata;
  trailers: grpc.Metadata;
}

export interface GrpcClient {
  call: GrpcCall;
  /** Like call, but resolves with headers and trailers, and with the error instead of rejecting. */
  callWithMetadata(method: string, request: object): Promise<GrpcOutcome>;
  close(): void;
}

/** A gRPC client for one service, authenticating every call with `key`. */
export function grpcClient(baseUrl: string, service: "MemoryService" | "RecallService" | "AdminService" | "StatsService" | "SkillService" | "MarketplaceService" | "ModerationService", key: string): GrpcClient {
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
    callWithMetadata: (method, request) =>
      new Promise((resolve) => {
        const metadata = new grpc.Metadata();
        metadata.set("authorization", `Bearer ${key}`);
        let headers = new grpc.Metadata();
        let result: Pick<GrpcOutcome, "response" | "error"> = {};
        const call = client[method](request, metadata, (err: grpc.ServiceError | null, res: Record<string, unknown>) => {
          result = err ? { error: err } : { response: res };
        });
        call.on("metadata", (m: grpc.Metadata) => (headers = m));
        // 'status' comes after the callback, with the trailers.
        call.on("status", (status: grpc.StatusObject) => resolve({ ...result, headers, trailers: status.metadata }));
      }),
    close: () => client.close(),
  };
}

const healthPackage = (grpc.loadPackageDefinition(protoLoader.loadSync("grpc/health/v1/health.proto", { includeDirs: ["proto"], enums: String })) as any).grpc
  .health.v1;

/** A grpc.health.v1.Health client, as load balancers and Kubernetes gRPC probes use it. */
export function grpcHealthClient(baseUrl: string): any {
  return new healthPackage.Health(new URL(baseUrl).host, grpc.credentials.createInsecure());
}

/** Health/Check of one service: its status name (SERVING, NOT_SERVING), or the call's error. */
export function grpcHealthCheck(client: any, service: string): Promise<{ status: string }> {
  return new Promise((resolve, reject) => client.Check({ service }, (err: Error | null, res: { status: string }) => (err ? reject(err) : resolve(res))));
}

export { grpc };
