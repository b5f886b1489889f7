import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import type { Authenticator } from "../accounts/authenticator.js";
import type { Admission } from "../usage/admission.js";
import { logFieldsOf, noteCaller } from "../observability/request-log.js";
import { isHttpApiUrl } from "./api-paths.js";
import { requestHeaders } from "./headers.js";

export interface HttpAdmissionOptions {
  auth: Authenticator;
  admission: Admission;
}

/**
 * Admits one HTTP request against its key's limits and puts the X-RateLimit headers on its reply.
 * The RPC behind the route authenticates again, from the cache; failures are reported there.
 */
export async function admitHttpRequest(opts: HttpAdmissionOptions, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const principal = await opts.auth.authenticate(requestHeaders(req.headers)).catch(() => undefined);
  if (principal) noteCaller(logFieldsOf(req), principal);
  const admitted = await opts.admission.admit(principal, req.ip);
  for (const [header, value] of admitted.headers) reply.header(header, value);
  // 'close' follows every response, finished or aborted, so the concurrency slot is always returned.
  reply.raw.once("close", admitted.release);
}

/**
 * Admits every REST request under /api/ (RPC routes, openapi.json, unknown paths, bodies that fail
 * to parse) and every MCP request (one JSON-RPC message each) against its key's limits before
 * anything else runs, and puts the X-RateLimit headers on its response, success or error. Connect and gRPC calls are admitted in bindService instead
 * (or by the Connect routes, for calls refused before they reach it). URLs Fastify cannot route
 * are admitted by the framework error handler (error-handler.ts).
 * Health and metrics endpoints are not API endpoints and are not limited.
 */
async function rateLimitHook(app: FastifyInstance, opts: HttpAdmissionOptions): Promise<void> {
  app.addHook("onRequest", async (req, reply) => {
    if (!isHttpApiUrl(req.url)) return;
    await admitHttpRequest(opts, req, reply);
  });
}

// Not encapsulated: the hook must see every route of the server.
export const rateLimitPlugin = fp(rateLimitHook, { name: "agentmem-rate-limits" });
