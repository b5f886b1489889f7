import type { FastifyInstance } from "fastify";
import type { Database } from "../db/database.js";

/** Liveness (the process answers) and readiness (the database answers). */
export async function healthPlugin(app: FastifyInstance, opts: { db: Database }): Promise<void> {
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_req, reply) => {
    try {
      await opts.db.ping();
      return { status: "ready", database: opts.db.kind };
    } catch {
      return reply.code(503).send({ status: "unavailable", database: opts.db.kind });
    }
  });
}
