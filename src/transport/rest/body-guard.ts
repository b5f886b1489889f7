import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { PassThrough } from "node:stream";
import { invalidRequest } from "../../errors/api-error.js";
import { isHttpApiUrl } from "../api-paths.js";
import { bodyTimeoutError } from "../body-errors.js";
import { closeAfterResponse } from "../close-unfinished.js";

export interface BodyGuardOptions {
  /** REQUEST_BODY_TIMEOUT_MS: the body must arrive within this time. */
  bodyTimeoutMs: number;
}

/** REST bodies are JSON as sent: Fastify would otherwise parse compressed bytes as JSON, whatever the header says. */
export function checkRestContentEncoding(value: string | undefined): void {
  if (value === undefined) return;
  const codings = value.split(",").map((c) => c.trim().toLowerCase());
  if (codings.every((c) => c === "identity")) return;
  throw invalidRequest("content-encoding", "content_encoding", "is not supported on REST: send the body uncompressed (identity)");
}

/**
 * Under /api/ and at /mcp: rejects compressed bodies, and fails a request whose body has not fully arrived
 * within the deadline (a slow or stalled client would otherwise hold the request and its
 * concurrency slot until Node's own 5-minute request timeout, which answers outside the error model).
 */
async function bodyGuard(app: FastifyInstance, opts: BodyGuardOptions): Promise<void> {
  app.addHook("preParsing", async (req, reply, payload) => {
    if (!isHttpApiUrl(req.url) || req.method === "GET" || req.method === "HEAD") return payload;
    checkRestContentEncoding(req.headers["content-encoding"]);
    const guarded = new PassThrough();
    // When no parser reads the body, the deadline's error has no other listener.
    guarded.on("error", () => undefined);
    const timer = setTimeout(() => {
      payload.unpipe(guarded);
      closeAfterResponse(req.raw, reply.raw);
      guarded.destroy(bodyTimeoutError(opts.bodyTimeoutMs));
    }, opts.bodyTimeoutMs);
    const stop = () => clearTimeout(timer);
    guarded.once("end", stop);
    reply.raw.once("close", stop);
    payload.pipe(guarded);
    return guarded;
  });
}

export const bodyGuardPlugin = fp(bodyGuard, { name: "agentmem-rest-body-guard" });
