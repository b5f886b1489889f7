import type { FastifyInstance } from "fastify";
import type { Readiness } from "./readiness.js";

/** Liveness (the process answers) and readiness (the database answers and the node is not shutting down). */
export async function healthPlugin(app: FastifyInstance, opts: { readiness: Readiness; database: string }): Promise<void> {
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_req, reply) => {
    if (await opts.readiness.check()) return { status: "ready", database: opts.database };
    return reply.code(503).send({ status: "unavailable", database: opts.database });
  });
}
