import { ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { AdminService } from "../../../gen/agent/v1/admin_pb.js";
import { MarketplaceService } from "../../../gen/agent/v1/marketplace_pb.js";
import { MemoryService } from "../../../gen/agent/v1/memory_pb.js";
import { ModerationService } from "../../../gen/agent/v1/moderation_pb.js";
import { RecallService } from "../../../gen/agent/v1/recall_pb.js";
import { SkillService } from "../../../gen/agent/v1/skill_pb.js";
import { StatsService } from "../../../gen/agent/v1/stats_pb.js";
import { ErrorInfoSchema } from "../../../gen/google/rpc/error_details_pb.js";

// Every message, enum and service of the API, as generated from proto/ by protoc-gen-es.
export * from "../../../gen/agent/v1/admin_pb.js";
export * from "../../../gen/agent/v1/errors_pb.js";
export * from "../../../gen/agent/v1/marketplace_pb.js";
export * from "../../../gen/agent/v1/memory_pb.js";
export * from "../../../gen/agent/v1/moderation_pb.js";
export * from "../../../gen/agent/v1/recall_pb.js";
export * from "../../../gen/agent/v1/skill_pb.js";
export * from "../../../gen/agent/v1/stats_pb.js";
export { ErrorInfoSchema, type ErrorInfo } from "../../../gen/google/rpc/error_details_pb.js";
export { ConnectError, Code } from "@connectrpc/connect";

export interface AgentMemClientOptions {
  /** The server, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** An API key (amk_…), sent as `Authorization: Bearer` with every call. */
  apiKey: string;
  /**
   * "connect" (the default: JSON over HTTP/1.1), "grpc" (binary over HTTP/2), "grpc-web", or any
   * Connect transport, e.g. one from @connectrpc/connect-web in a browser.
   */
  transport?: "connect" | "grpc" | "grpc-web" | Transport;
}

/** One typed client per service; every method takes the request message and answers the response message. */
export interface AgentMemClient {
  memories: Client<typeof MemoryService>;
  recall: Client<typeof RecallService>;
  skills: Client<typeof SkillService>;
  marketplace: Client<typeof MarketplaceService>;
  stats: Client<typeof StatsService>;
  /** Needs an admin key. */
  admin: Client<typeof AdminService>;
  /** Needs an admin key. */
  moderation: Client<typeof ModerationService>;
}

function namedTransport(name: "connect" | "grpc" | "grpc-web", baseUrl: string): Transport {
  if (name === "grpc") return createGrpcTransport({ baseUrl });
  if (name === "grpc-web") return createGrpcWebTransport({ baseUrl, httpVersion: "1.1" });
  return createConnectTransport({ baseUrl, httpVersion: "1.1" });
}

/** The transport with the key's Authorization header on every call (a given transport cannot take interceptors later). */
function withApiKey(transport: Transport, apiKey: string): Transport {
  const authorized = (header: ConstructorParameters<typeof Headers>[0]) => {
    const headers = new Headers(header);
    headers.set("authorization", `Bearer ${apiKey}`);
    return headers;
  };
  return {
    unary: (method, signal, timeoutMs, header, input, contextValues) => transport.unary(method, signal, timeoutMs, authorized(header), input, contextValues),
    stream: (method, signal, timeoutMs, header, input, contextValues) => transport.stream(method, signal, timeoutMs, authorized(header), input, contextValues),
  };
}

export function createAgentMemClient(options: AgentMemClientOptions): AgentMemClient {
  const { baseUrl, apiKey, transport = "connect" } = options;
  const authorized = withApiKey(typeof transport === "string" ? namedTransport(transport, baseUrl) : transport, apiKey);
  return {
    memories: createClient(MemoryService, authorized),
    recall: createClient(RecallService, authorized),
    skills: createClient(SkillService, authorized),
    marketplace: createClient(MarketplaceService, authorized),
    stats: createClient(StatsService, authorized),
    admin: createClient(AdminService, authorized),
    moderation: createClient(ModerationService, authorized),
  };
}

/** The service's error of a failed call: its code (e.g. "not_found"), message and details (e.g. {field, rule}). */
export interface AgentMemError {
  code: string;
  message: string;
  details: Record<string, string>;
}

/** The error model's code, message and details of a failed call (its google.rpc.ErrorInfo), or undefined for other failures. */
export function agentMemError(err: unknown): AgentMemError | undefined {
  const error = ConnectError.from(err);
  const info = error.findDetails(ErrorInfoSchema)[0];
  return info ? { code: info.reason, message: error.rawMessage, details: { ...info.metadata } } : undefined;
}
