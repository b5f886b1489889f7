import type { FastifyInstance } from "fastify";
import { readFile } from "node:fs/promises";
import { consolePrefix } from "./console-plugin.js";

const faviconPath = new URL("./favicon.ico", import.meta.url);

/** The server's root: a browser opening it lands on the console, and finds the icon browsers ask for. */
export async function rootRoutes(app: FastifyInstance): Promise<void> {
  const favicon = await readFile(faviconPath);
  app.get("/", (_req, reply) => reply.redirect(`${consolePrefix}/`, 302));
  app.get("/favicon.ico", (_req, reply) => reply.type("image/x-icon").header("cache-control", "public, max-age=86400").send(favicon));
}
