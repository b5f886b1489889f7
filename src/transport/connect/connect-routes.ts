import { Code, ConnectError, createConnectRouter, type ConnectRouter, type ContextValues } from "@connectrpc/connect";
import { createAsyncIterable, type UniversalHandler, type UniversalServerResponse } from "@connectrpc/connect/protocol";
import { compressionBrotli, compressionGzip, universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { apiError, invalidRequest } from "../../errors/api-error.js";
import { withHeaders, type Admission } from "../../usage/admission.js";
import type { Authenticator } from "../../accounts/authenticator.js";
import { logFieldsOf, noteCaller, noteError } from "../../observability/request-log.js";
import { closeAfterResponse } from "../close-unfinished.js";
import { requestHeaders } from "../headers.js";
import { vetBody, vetHeaders, type VetOptions } from "./vet-request.js";
import { errorResponse, refusalWireOf, wireOf, withGrpcTrailerEncoding, type Wire } from "./wire.js";

export interface ConnectRoutesOptions {
  routes(router: ConnectRouter): void;
  contextValues(req: FastifyRequest): ContextValues;
  /** BODY_LIMIT_BYTES. */
  maxBytes: number;
  /** REQUEST_BODY_TIMEOUT_MS. */
  bodyTimeoutMs: number;
  auth: Authenticator;
  /** Services callable without a key (gRPC health); every other call's key is checked before its body is read. */
  keylessServices: ReadonlySet<string>;
  /** Why every call of a service is refused (ServiceBinding.refusal), checked after the key and before the body. */
  refusal(serviceTypeName: string): ConnectError | undefined;
  admission: Admission;
}

const compressions = [compressionGzip, compressionBrotli];

/**
 * Serves the Connect router (Connect, gRPC, gRPC-Web) on Fastify, as @connectrpc/connect-fastify does,
 * except that every unary call is vetted first (vet-request.ts) and every refusal answers in the error
 * model, in the caller's protocol, with the rate-limit headers. An encapsulated plugin: its
 * catch-all content-type parser leaves the body to Connect and does not reach the REST routes.
 * No shutdown signal: the one-port server gives in-flight requests SHUTDOWN_GRACE_MS, and
 * Connect's version hangs every request on one shared AbortSignal (MaxListenersExceeded).
 */
export async function connectRoutes(app: FastifyInstance, opts: ConnectRoutesOptions): Promise<void> {
  const router = createConnectRouter({
    readMaxBytes: opts.maxBytes,
    acceptCompression: compressions,
    // Every field written, as REST writes them: a field the spec says is always present is present.
    jsonOptions: { ignoreUnknownFields: false, alwaysEmitImplicit: true },
  });
  opts.routes(router);
  const bodyReadStarted = new WeakSet<FastifyRequest>();
  const vet: VetOptions = { maxBytes: opts.maxBytes, bodyTimeoutMs: opts.bodyTimeoutMs, compressions };
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_req, _payload, done) => done(null, undefined));
  for (const handler of router.handlers) {
    app.all(handler.requestPath, (req, reply) => (handler.method.methodKind === "unary" ? serve(handler, req, reply) : serveStream(handler, req, reply)));
  }

  async function serve(handler: UniversalHandler, req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const wire = refusalWireOf(req.headers["content-type"] ?? null);
    let res: UniversalServerResponse;
    try {
      const vetted = await vetCall(handler, req);
      res =
        vetted instanceof ConnectError
          ? await refuse(req, wire, vetted)
          : withGrpcTrailerEncoding(
              wire,
              await handler({
                ...universalRequestFromNodeRequest(req.raw, reply.raw, undefined, opts.contextValues(req)),
                body: createAsyncIterable([vetted]),
              }),
            );
    } catch (err) {
      req.log.error({ err, rpc: `${handler.service.typeName}/${handler.method.name}` }, "unexpected failure");
      noteError(logFieldsOf(req), err);
      res = errorResponse(wire, apiError("server_error", "internal server error"));
    }
    // Refused while its body was being read (too large, too slow): nothing will read the rest. A body
    // never read is discarded by Node, keeping the connection usable.
    if (bodyReadStarted.has(req) && !req.raw.readableEnded) closeAfterResponse(req.raw, reply.raw);
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    try {
      await universalResponseToNodeResponse(res, reply.raw);
    } catch (err) {
      if (ConnectError.from(err).code !== Code.Aborted) req.log.warn({ err }, "response not delivered");
    }
  }

  /**
   * A streaming call (gRPC health Watch, server reflection) goes to Connect as it is: its messages
   * arrive while it runs, so there is no whole body to vet, and these services are gRPC's own, with
   * gRPC's own errors.
   */
  async function serveStream(handler: UniversalHandler, req: FastifyRequest, reply: FastifyReply): Promise<void> {
    let res: UniversalServerResponse;
    try {
      res = await handler(universalRequestFromNodeRequest(req.raw, reply.raw, undefined, opts.contextValues(req)));
    } catch (err) {
      req.log.error({ err, rpc: `${handler.service.typeName}/${handler.method.name}` }, "unexpected failure");
      noteError(logFieldsOf(req), err);
      res = errorResponse(refusalWireOf(req.headers["content-type"] ?? null), apiError("server_error", "internal server error"));
    }
    try {
      await universalResponseToNodeResponse(res, reply.raw);
    } catch (err) {
      if (ConnectError.from(err).code !== Code.Aborted) req.log.warn({ err }, "response not delivered");
    }
  }

  /**
   * The body of a call Connect will accept, or why it must not see the call.
   * Called for unary methods only, so the whole body is one message.
   */
  async function vetCall(handler: UniversalHandler, req: FastifyRequest): Promise<Uint8Array | ConnectError> {
    const wire = wireOf(req.headers["content-type"] ?? null);
    if (wire === undefined || !handler.supportedContentType(req.headers["content-type"] ?? "")) {
      return invalidRequest("content-type", "content_type", "must be application/json or application/proto (Connect), application/grpc or application/grpc-web");
    }
    if (req.method !== "POST") return invalidRequest("method", "http_method", "must be POST");
    const authority = "authority" in req.raw ? req.raw.authority : req.headers.host;
    if (!authority || !URL.canParse(req.url, `http://${authority}`)) return invalidRequest("host", "format", "must name the server's authority");
    const header = requestHeaders(req.headers);
    const refused = vetHeaders(wire, header, vet);
    if (refused) return refused;
    // A caller without a valid key gets unauthenticated, not a verdict on its message, and costs no reading.
    if (!opts.keylessServices.has(handler.service.typeName)) {
      const unauthenticated = await opts.auth.authenticate(header).then(
        () => undefined,
        (err: unknown) => ConnectError.from(err),
      );
      if (unauthenticated) return unauthenticated;
    }
    const off = opts.refusal(handler.service.typeName);
    if (off) return off;
    try {
      bodyReadStarted.add(req);
      return await vetBody(wire, handler.method, header, requestBody(req), vet);
    } catch (err) {
      if (err instanceof ConnectError) return err;
      throw err;
    }
  }

  /** A refusal in the caller's protocol, admitted like any call so it carries the rate-limit headers (or is rate limited). */
  async function refuse(req: FastifyRequest, wire: Wire | undefined, refusal: ConnectError): Promise<UniversalServerResponse> {
    const principal = await opts.auth.authenticate(requestHeaders(req.headers)).catch(() => undefined);
    const fields = logFieldsOf(req);
    if (principal) noteCaller(fields, principal);
    noteError(fields, refusal);
    try {
      const admitted = await opts.admission.admit(principal, req.ip);
      admitted.release();
      return errorResponse(wire, withHeaders(refusal, admitted.headers));
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      noteError(fields, err);
      return errorResponse(wire, err);
    }
  }
}

async function* requestBody(req: FastifyRequest): AsyncIterable<Uint8Array> {
  for await (const chunk of req.raw) yield chunk as Uint8Array;
}
