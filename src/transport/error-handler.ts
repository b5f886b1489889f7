import { ConnectError } from "@connectrpc/connect";
import type { FastifyError, FastifyInstance } from "fastify";
import { apiError, describeError, httpStatusOf } from "../errors/api-error.js";

/** Renders every REST failure, ours or Fastify's (bad JSON, body too large, no route), as the spec's error body. */
export function restErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const fromFastify = typeof err.code === "string" && err.code.startsWith("FST_");
    const error = fromFastify ? fastifyError(err) : describeError(err);
    if (error.code === "server_error") req.log.error({ err }, "request failed");
    // Our errors' metadata (Retry-After, rate-limit headers) are response headers on every transport.
    const thrown: unknown = err;
    if (thrown instanceof ConnectError) thrown.metadata.forEach((value, name) => void reply.header(name, value));
    return reply.code(httpStatusOf(error.code)).send({ error });
  });
  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send({ error: { code: "not_found", message: `no route ${req.method} ${req.url.split("?")[0]}`, details: {} } }),
  );
}

function fastifyError(err: FastifyError) {
  if (err.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return describeError(apiError("invalid_request", "body: is larger than the request size limit", { field: "body", rule: "max_size" }));
  }
  if ((err.statusCode ?? 500) < 500) {
    return describeError(apiError("invalid_request", `body: ${err.message}`, { field: "body", rule: "format" }));
  }
  return describeError(err);
}
