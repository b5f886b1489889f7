import { fastifyConnectPlugin } from "@connectrpc/connect-fastify";
import Fastify, { LogController, type FastifyInstance } from "fastify";
import { readFile } from "node:fs/promises";
import { AdminService } from "../gen/agent/v1/admin_pb.js";
import { MemoryService } from "../gen/agent/v1/memory_pb.js";
import { adminService } from "./accounts/admin-service.js";
import { createAuthenticator } from "./accounts/authenticator.js";
import type { Config } from "./config.js";
import { openDatabase, type Database } from "./db/database.js";
import { migrate } from "./db/migrations.js";
import { memoryService } from "./memories/memory-service.js";
import { healthPlugin } from "./observability/health.js";
import { metricsPlugin } from "./observability/metrics.js";
import { restErrorHandling } from "./transport/error-handler.js";
import { onePortServer } from "./transport/one-port.js";
import { restRoutes } from "./transport/rest/rest-routes.js";
import { bindService, type ServiceBinding } from "./transport/service-binding.js";
import { requestHeaders } from "./transport/headers.js";

export interface App {
  fastify: FastifyInstance;
  db: Database;
  /** The address actually bound, e.g. http://127.0.0.1:8080. */
  url: string;
  close(): Promise<void>;
}

const openApiPath = new URL("../gen/openapi.json", import.meta.url);

/** Opens storage, migrates it, and serves every service on one port over gRPC, gRPC-Web, Connect and REST. */
export async function startApp(config: Config): Promise<App> {
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, poolSize: config.DATABASE_POOL_SIZE });
  try {
    await migrate(db);
    const fastify = Fastify({
      serverFactory: onePortServer({ graceMs: config.SHUTDOWN_GRACE_MS }),
      bodyLimit: config.BODY_LIMIT_BYTES,
      // Per-request logs cost throughput; latency and status per route are in /metrics.
      logController: new LogController({ disableRequestLogging: true }),
      logger: { level: config.LOG_LEVEL, redact: ["req.headers.authorization", "headers.authorization"] },
    });
    const auth = createAuthenticator(db, config.AGENTMEM_ADMIN_KEY, config.AUTH_CACHE_TTL_MS);
    const guard = { auth, log: fastify.log };
    const bindings: ServiceBinding[] = [
      bindService(MemoryService, memoryService(db), { ...guard, role: "agent" }),
      bindService(AdminService, adminService(db, auth), { ...guard, role: "admin" }),
    ];

    restErrorHandling(fastify);
    await fastify.register(metricsPlugin);
    await fastify.register(healthPlugin, { db });
    await fastify.register(restRoutes, { bindings });
    const openApi = await readFile(openApiPath, "utf8");
    fastify.get("/api/v1/agent/openapi.json", async (req, reply) => {
      await auth.authenticate(requestHeaders(req.headers));
      return reply.type("application/json").send(openApi);
    });
    await fastify.register(fastifyConnectPlugin, {
      routes: (router) => {
        for (const b of bindings) router.service(b.service, b.impl);
      },
      readMaxBytes: config.BODY_LIMIT_BYTES,
      jsonOptions: { ignoreUnknownFields: false },
      shutdownTimeoutMs: config.SHUTDOWN_GRACE_MS,
    });

    const url = await fastify.listen({ port: config.PORT, host: config.HOST });
    return {
      fastify,
      db,
      url,
      async close() {
        await fastify.close();
        await db.close();
      },
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}
