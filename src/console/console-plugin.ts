import { ConnectError } from "@connectrpc/connect";
import fastifyStatic from "@fastify/static";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { existsSync } from "node:fs";
import path from "node:path";
import { apiError, describeError, invalidRequest } from "../errors/api-error.js";
import { logFieldsOf } from "../observability/request-log.js";
import { sendError } from "../transport/error-handler.js";

export const consolePrefix = "/console";

/**
 * Every console response: the page loads only its own scripts, styles and API (no inline code, no other
 * origin), cannot be framed, and sends no referrer (its URLs never hold the key, but hashes name memories).
 */
export const consoleSecurityHeaders: Readonly<Record<string, string>> = {
  "content-security-policy": [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; "),
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
};

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${body}</p></body></html>\n`;

const sendPage = (reply: FastifyReply, status: number, title: string, body: string) =>
  reply.code(status).type("text/html; charset=utf-8").header("cache-control", "no-store").send(page(title, body));

/**
 * Why a console URL can name no file of the build, or null when it may. A NUL, a backslash or a ".."
 * segment (raw or percent-encoded) never names one; @fastify/send would refuse them with an error of
 * its own (400 or 403) that is no API error, which the server rendered as a 500 with a logged stack.
 */
export function badConsolePath(url: string): string | null {
  const raw = url.split("?", 1)[0]!;
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return "holds an invalid percent-encoding";
  }
  if (decoded.includes("\0")) return "must not hold a NUL character";
  if (decoded.includes("\\")) return "must not hold a backslash";
  if (/(?:^|\/)\.\.(?:\/|$)/.test(decoded)) return "must not hold a '..' segment";
  return null;
}

/**
 * What @fastify/send's own refusals of a console URL mean in the error model (they carry an HTTP status,
 * no API code): a client error, logged at debug level. Anything else (a file the server cannot read) is
 * left to the server's error handler.
 */
function sendRefusal(err: FastifyError): ReturnType<typeof apiError> | null {
  // http-errors, which @fastify/send makes, say whether their message may be shown; Fastify's and ours do not.
  if (!("expose" in err) || err instanceof ConnectError) return null;
  switch (err.statusCode) {
    case 400:
      return invalidRequest("path", "format", "names no file of the console");
    case 403:
      return apiError("not_found", "no such console file", {});
    case 412:
      return invalidRequest("if-match", "precondition", "does not match the file");
    case 416:
      return invalidRequest("range", "satisfiable", "is outside the file");
  }
  return null;
}

const refuse = (req: FastifyRequest, reply: FastifyReply, error: ReturnType<typeof apiError>) => {
  const body = describeError(error);
  logFieldsOf(req).errorCode = body.code;
  return sendError(reply, body);
};

/**
 * Serves the built console under /console (index.html at /console/). Without a build the server still
 * starts, and every console URL answers 503 saying how to build it, until a build appears.
 */
export async function consolePlugin(app: FastifyInstance, opts: { dir: string }): Promise<void> {
  const index = path.join(opts.dir, "index.html");
  let built = existsSync(index);
  if (!built) app.log.warn({ dir: opts.dir }, "the web console is not built: /console answers 503 until `npm run build` has run");

  app.addHook("onRequest", async (req, reply) => {
    const bad = badConsolePath(req.url);
    if (bad !== null) {
      req.log.debug({ url: req.url }, "console path refused");
      return refuse(req, reply, invalidRequest("path", "format", bad));
    }
    built ||= existsSync(index);
    if (!built) {
      return sendPage(reply, 503, "The console is not built", "Run <code>npm run build</code> in the agentmem directory, then reload this page.");
    }
  });
  app.addHook("onSend", async (_req, reply, payload) => {
    reply.headers(consoleSecurityHeaders);
    return payload;
  });

  const serverErrors = app.errorHandler;
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const refusal = sendRefusal(err);
    if (refusal === null) return serverErrors.call(app, err, req, reply);
    req.log.debug({ url: req.url, status: err.statusCode }, "console file refused");
    return refuse(req, reply, refusal);
  });
  await app.register(fastifyStatic, {
    root: opts.dir,
    prefix: "/",
    dotfiles: "ignore",
    index: ["index.html"],
    // Built assets carry a content hash in their names: cached for good. index.html names them: always revalidated.
    cacheControl: false,
    setHeaders: (res, file) => {
      res.setHeader("cache-control", file.includes(`${path.sep}assets${path.sep}`) ? "public, max-age=31536000, immutable" : "no-cache");
    },
  });
  // The page's relative asset URLs need the trailing slash.
  app.get("", (_req, reply) => reply.redirect(`${consolePrefix}/`, 301));
  app.setNotFoundHandler((_req, reply) => sendPage(reply, 404, "Not found", 'The console lives at <a href="/console/">/console/</a>.'));
}
