import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply } from "fastify";
import { existsSync } from "node:fs";
import path from "node:path";

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
 * Serves the built console under /console (index.html at /console/). Without a build the server still
 * starts, and every console URL answers 503 saying how to build it, until a build appears.
 */
export async function consolePlugin(app: FastifyInstance, opts: { dir: string }): Promise<void> {
  const index = path.join(opts.dir, "index.html");
  let built = existsSync(index);
  if (!built) app.log.warn({ dir: opts.dir }, "the web console is not built: /console answers 503 until `npm run build` has run");

  app.addHook("onRequest", async (_req, reply) => {
    built ||= existsSync(index);
    if (!built) {
      return sendPage(reply, 503, "The console is not built", "Run <code>npm run build</code> in the agentmem directory, then reload this page.");
    }
  });
  app.addHook("onSend", async (_req, reply, payload) => {
    reply.headers(consoleSecurityHeaders);
    return payload;
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
