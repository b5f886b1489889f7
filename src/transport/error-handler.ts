import { ConnectError } from "@connectrpc/connect";
import { errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import type { Duplex } from "node:stream";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { apiError, describeError, httpStatusOf, invalidRequest, type ErrorBody } from "../errors/api-error.js";
import { logFieldsOf } from "../observability/request-log.js";
import { isHttpApiUrl } from "./api-paths.js";
import { bodyTooLargeError } from "./body-errors.js";
import { admitHttpRequest, type HttpAdmissionOptions } from "./rate-limit-hook.js";

/** Renders every REST failure, ours or Fastify's (bad JSON, body too large, no route), as the spec's error body. */
export function restErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const fromFastify = typeof err.code === "string" && err.code.startsWith("FST_");
    const error = fromFastify ? describeError(fastifyError(err)) : describeError(err);
    if (error.code === "server_error") req.log.error({ err }, "request failed");
    logFieldsOf(req).errorCode = error.code;
    // Our errors' metadata (Retry-After, rate-limit headers) are response headers on every transport.
    const thrown: unknown = err;
    if (thrown instanceof ConnectError) thrown.metadata.forEach((value, name) => void reply.header(name, value));
    return sendError(reply, error);
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split("?")[0]!;
    const allowed = routeMethods.filter((method) => app.findRoute({ method, url: path }) !== null);
    if (allowed.length > 0) {
      logFieldsOf(req).errorCode = "method_not_allowed";
      const allow = allowed.join(", ");
      return sendError(reply.header("allow", allow), { code: "method_not_allowed", message: `${path} answers ${allow}, not ${req.method}`, details: { method: req.method, allow } });
    }
    logFieldsOf(req).errorCode = "not_found";
    return sendError(reply, { code: "not_found", message: `no route ${req.method} ${path}`, details: {} });
  });
}

// The methods a path can be asked whether it has (Fastify adds HEAD to every GET route).
const routeMethods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;

/** Sends an error model body with its code's HTTP status. */
export function sendError(reply: FastifyReply, error: ErrorBody) {
  return reply.code(httpStatusOf(error.code)).type("application/json; charset=utf-8").send({ error });
}

/**
 * Fastify's `frameworkErrors` option: URLs its router rejects before any hook runs (a malformed
 * percent-escape, an over-long path parameter) get the error model and, under /api/ and at /mcp, the rate-limit
 * headers every API response carries.
 */
export function frameworkErrorHandler(admission: HttpAdmissionOptions) {
  return async (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    if (isHttpApiUrl(req.url)) await admitHttpRequest(admission, req, reply);
    const error = describeError(fastifyError(err));
    logFieldsOf(req).errorCode = error.code;
    return sendError(reply, error);
  };
}

/** Fastify's own failures in our terms; its messages name its internals, so they are not passed on. */
export function fastifyError(err: FastifyError): ConnectError {
  switch (err.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return bodyTooLargeError();
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return invalidRequest("body", "required", "must not be empty when content-type is application/json");
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return invalidRequest("body", "format", "is not valid JSON");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
    case "FST_ERR_CTP_INVALID_TYPE":
      return invalidRequest("content-type", "content_type", "must be application/json");
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return invalidRequest("content-length", "content_length", "does not match the length of the body");
    case "FST_ERR_BAD_URL":
      return invalidRequest("path", "format", "holds an invalid percent-encoding");
    case "FST_ERR_MAX_PARAM_LENGTH":
      return invalidRequest("path", "max_length", "has a path parameter longer than the server accepts");
  }
  if ((err.statusCode ?? 500) < 500) return invalidRequest("body", "format", "cannot be read as a request");
  return apiError("server_error", "internal server error");
}

/**
 * Answers an HTTP/1.1 request Node's parser refused (a URL or headers over its 16 KiB limit, a
 * malformed request line) with the error model and the rate-limit headers of the client's address,
 * then closes the connection: nothing after the bad bytes can be trusted.
 */
export function clientErrorHandler(opts: HttpAdmissionOptions) {
  return (err: NodeJS.ErrnoException, socket: Duplex & { remoteAddress?: string }) => {
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const refusal =
      err.code === "HPE_HEADER_OVERFLOW"
        ? invalidRequest("headers", "max_size", "are larger than the server accepts (16 KiB with the URL)")
        : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? invalidRequest("request", "read_timeout", "was not received completely in time")
          : invalidRequest("request", "format", "is not a valid HTTP/1.1 request");
    opts.admission
      .admit(undefined, socket.remoteAddress ?? "unknown")
      .then(
        (admitted) => {
          admitted.release();
          return { error: refusal, headers: admitted.headers };
        },
        (limited: unknown) => ({ error: limited, headers: [] as ReadonlyArray<readonly [string, string]> }),
      )
      .then(({ error, headers }) => {
        const described = describeError(error);
        const status = httpStatusOf(described.code);
        // Connect routes (/package.Service/Method) answer Connect's error JSON; everything else REST's.
        const connect = rpcPath.test(requestPathOf(err)) && error instanceof ConnectError;
        const body = connect ? Buffer.from(errorToJsonBytes(error, {})) : Buffer.from(JSON.stringify({ error: described }));
        const lines = [
          `HTTP/1.1 ${status} ${status === 400 ? "Bad Request" : "Too Many Requests"}`,
          `content-type: application/json${connect ? "" : "; charset=utf-8"}`,
          `content-length: ${body.length}`,
          "connection: close",
          ...headers.map(([name, value]) => `${name}: ${value}`),
          ...(error instanceof ConnectError ? [...error.metadata].map(([name, value]) => `${name}: ${value}`) : []),
        ];
        socket.end(Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`), body]));
      })
      .catch(() => socket.destroy());
  };
}

const rpcPath = /^\/[\w.]+\/\w+$/;

/** The path of the request line in the bytes Node's parser refused, or "" when it is unreadable. */
function requestPathOf(err: NodeJS.ErrnoException & { rawPacket?: Buffer }): string {
  const line = err.rawPacket?.toString("latin1", 0, 2048).split("\r\n", 1)[0] ?? "";
  return line.split(" ")[1] ?? "";
}
