import { createContextKey } from "@connectrpc/connect";
import type { FastifyInstance, FastifyReply, FastifyRequest, LogLevel } from "fastify";
import fp from "fastify-plugin";
import { randomBytes } from "node:crypto";
import { levels } from "pino";
import type { IncomingMessage } from "node:http";
import type { Principal } from "../accounts/principal.js";
import { describeError } from "../errors/api-error.js";

// One log line per request, on every transport (REST, Connect, gRPC, gRPC-Web, MCP): what was called,
// by which key, how it ended and how long it took. It names the key by its id and never carries
// secrets, headers or bodies: only the fields below are written.

/** What the handlers learn about a request that its log line reports; filled in as the request runs. */
export interface RequestLogFields {
  keyId?: string;
  workspace?: string;
  /** The error model's code, when the request failed (also for gRPC, whose HTTP status is 200). */
  errorCode?: string;
  /** The recall trace a Recall call recorded (GET /api/v1/agent/recall/traces/{id}). */
  recallTraceId?: string;
}

/** The request's log fields in a handler context (REST, Connect, gRPC, MCP tools); undefined outside a request. */
export const requestLogKey = createContextKey<RequestLogFields | undefined>(undefined, { description: "request log fields" });

declare module "fastify" {
  interface FastifyRequest {
    logFields: RequestLogFields | null;
  }
}

/** The log fields of a request, created on first use (a request Fastify refuses before its hooks has none yet). */
export function logFieldsOf(req: FastifyRequest): RequestLogFields {
  return (req.logFields ??= {});
}

/** Records who is calling: the key's id and workspace, never the key itself. */
export function noteCaller(fields: RequestLogFields | undefined, principal: Principal): void {
  if (!fields) return;
  fields.keyId = principal.keyId;
  if (principal.workspace !== null) fields.workspace = principal.workspace;
}

export function noteError(fields: RequestLogFields | undefined, err: unknown): void {
  if (fields) fields.errorCode = describeError(err).code;
}

export function noteRecallTrace(fields: RequestLogFields | undefined, traceId: string): void {
  if (fields) fields.recallTraceId = traceId;
}

const traceparentPattern = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;

/**
 * Fastify's request id, logged as traceId on this request's every line: the trace id of a W3C
 * `traceparent` header, so lines join the caller's distributed trace, else a new random one.
 */
export function traceIdOf(req: IncomingMessage): string {
  const header = req.headers.traceparent;
  const match = typeof header === "string" ? traceparentPattern.exec(header.trim()) : null;
  const traceId = match?.[1];
  return traceId !== undefined && !/^0+$/.test(traceId) ? traceId : randomBytes(16).toString("hex");
}

/** The wire protocol of a request, from its route and content type. */
function protocolOf(req: FastifyRequest, route: string | undefined): string {
  if (route === "/mcp") return "mcp";
  if (route?.startsWith("/api/")) return "rest";
  const type = req.headers["content-type"] ?? "";
  if (route && /^\/[\w.]+\/\w+$/.test(route)) {
    if (type.startsWith("application/grpc-web")) return "grpc-web";
    if (type.startsWith("application/grpc")) return "grpc";
    return "connect";
  }
  return "http";
}

export interface RequestLogOptions {
  /** REQUEST_LOG_LEVEL: the level of the request lines; "silent" writes none. */
  level: LogLevel | "silent";
}

// Probes (load balancers, Kubernetes, Prometheus) call every few seconds: their lines are debug, not noise at info.
const probeRoutes = new Set(["/healthz", "/readyz", "/metrics", "/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch", "/grpc.health.v1.Health/List"]);

async function requestLog(app: FastifyInstance, opts: RequestLogOptions): Promise<void> {
  app.decorateRequest("logFields", null);
  if (opts.level === "silent") return;
  const level = opts.level;
  // The server's level is fixed at start: lines below it are not even built.
  const threshold = levels.values[app.log.level] ?? Infinity; // "silent" has no number: nothing passes
  const logged = (l: LogLevel) => levels.values[l]! >= threshold;
  const requestLogged = logged(level);
  const probeLogged = logged("debug");
  app.addHook("onResponse", async (req: FastifyRequest, reply: FastifyReply) => {
    const route = req.routeOptions.url;
    const probe = route !== undefined && probeRoutes.has(route);
    if (!(probe ? probeLogged : requestLogged)) return;
    const lineLevel = probe ? "debug" : level;
    const fields = req.logFields ?? {};
    req.log[lineLevel](
      {
        method: req.method,
        route: route ?? null,
        protocol: protocolOf(req, route),
        status: reply.statusCode,
        latencyMs: Math.round(reply.elapsedTime * 100) / 100,
        keyId: fields.keyId ?? null,
        workspace: fields.workspace ?? null,
        errorCode: fields.errorCode ?? null,
        ...(fields.recallTraceId ? { recallTraceId: fields.recallTraceId } : {}),
      },
      "request",
    );
  });
}

// Not encapsulated: the hook must see every route of the server.
export const requestLogPlugin = fp(requestLog, { name: "agentmem-request-log" });
