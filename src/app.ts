import { createContextValues } from "@connectrpc/connect";
import Fastify, { LogController, type FastifyInstance } from "fastify";
import type { DestinationStream } from "pino";
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import os from "node:os";
import { AdminService } from "../gen/agent/v1/admin_pb.js";
import { MemoryService } from "../gen/agent/v1/memory_pb.js";
import { RecallService } from "../gen/agent/v1/recall_pb.js";
import { MarketplaceService } from "../gen/agent/v1/marketplace_pb.js";
import { ModerationService } from "../gen/agent/v1/moderation_pb.js";
import { SkillService } from "../gen/agent/v1/skill_pb.js";
import { StatsService } from "../gen/agent/v1/stats_pb.js";
import { adminService } from "./accounts/admin-service.js";
import { createAuthenticator } from "./accounts/authenticator.js";
import type { Config } from "./config.js";
import { openDatabase, type Database } from "./db/database.js";
import { migrate } from "./db/migrations.js";
import { createEmbedder } from "./embeddings/create-embedder.js";
import type { Embedder } from "./embeddings/embedder.js";
import { cachedQueryEmbedder } from "./embeddings/query-cache.js";
import { cachingEmbedder } from "./embeddings/text-cache.js";
import { createContradictionFinder } from "./memories/contradictions/finder.js";
import { jobVectorReader } from "./memories/job-vectors.js";
import { createJudge } from "./memories/contradictions/judge.js";
import { purgeIdempotencyKeys } from "./memories/idempotency.js";
import { memoryService } from "./memories/memory-service.js";
import { backfillContentTokens } from "./memories/token-backfill.js";
import { writeEmbedder } from "./memories/write-vectors.js";
import { createTokenCounter } from "./recall/token-counter.js";
import { checkIndexState } from "./search/index-state.js";
import { createIndexer, defaultIndexerOptions, indexBacklog, type Indexer, type IndexerOptions } from "./search/indexer.js";
import { createMaintainerLease, type MaintainerLease } from "./search/maintainer-lease.js";
import { pendingReader } from "./recall/pending-candidates.js";
import { recallService } from "./recall/recall-service.js";
import { createReranker } from "./recall/reranker.js";
import { createTraceStore, type TraceStore } from "./recall/trace-store.js";
import { isObjectStore } from "./search/vector/lance-consistency.js";
import { checkObjectStore } from "./search/vector/object-store-check.js";
import { indexWritersOf, lanceLocationOf, openVectorIndex, readConsistencyMsOf } from "./search/vector/open-vector-index.js";
import { everyNodeWrites } from "./search/writer-role.js";
import { openSkillIndex } from "./search/skills/open-skill-index.js";
import { createSkillIndexer, type SkillIndexer } from "./search/skills/skill-indexer.js";
import type { SkillVectorIndex } from "./search/skills/skill-vector-index.js";
import { skillService } from "./skills/skill-service.js";
import { createEmailSender, type EmailSender } from "./marketplace/email-sender.js";
import { marketplaceService } from "./marketplace/marketplace-service.js";
import { marketplaceRefusal } from "./marketplace/marketplace-rules.js";
import { moderationService } from "./marketplace/moderation-service.js";
import { skillPublishing } from "./marketplace/publishing.js";
import type { VectorIndex } from "./search/vector/vector-index.js";
import { defaultConsoleDir } from "./console/console-dir.js";
import { consolePlugin, consolePrefix } from "./console/console-plugin.js";
import { rootRoutes } from "./console/root-routes.js";
import { healthPlugin } from "./observability/health.js";
import { healthService } from "./observability/grpc-health.js";
import { loggerOptions } from "./observability/logger.js";
import { createReadiness } from "./observability/readiness.js";
import { logFieldsOf, requestLogKey, requestLogPlugin, traceIdOf } from "./observability/request-log.js";
import { reflectionServices } from "./transport/grpc-reflection.js";
import { Health } from "../gen/grpc/health/v1/health_pb.js";
import { ServerReflection } from "../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ServerReflectionV1Alpha } from "../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { metricsPlugin } from "./observability/metrics.js";
import { connectRoutes } from "./transport/connect/connect-routes.js";
import { clientErrorHandler, frameworkErrorHandler, restErrorHandling } from "./transport/error-handler.js";
import { inFlightGate } from "./in-flight-gate.js";
import { jsonBodies } from "./transport/rest/json-bodies.js";
import { onePortServer } from "./transport/one-port.js";
import { restRoutes } from "./transport/rest/rest-routes.js";
import { bindService, clientAddressKey, type ServiceBinding } from "./transport/service-binding.js";
import { requestHeaders } from "./transport/headers.js";
import { mcpRoutes } from "./transport/mcp/mcp-routes.js";
import type { McpToolDefinition } from "./transport/mcp/tool-definitions.js";
import { bodyGuardPlugin } from "./transport/rest/body-guard.js";
import { rateLimitPlugin } from "./transport/rate-limit-hook.js";
import { createAdmission } from "./usage/admission.js";
import { memoryRateLimitStore, postgresRateLimitStore, type RateLimitStore } from "./usage/rate-limit-store.js";
import { statsService } from "./usage/stats-service.js";
import { usageMeter } from "./usage/usage-meter.js";

export interface App {
  fastify: FastifyInstance;
  db: Database;
  vectors: VectorIndex;
  indexer: Indexer;
  /** The index maintainer lease of this node; null on a node that does not index. */
  maintainer: MaintainerLease | null;
  /** The embedding model itself, without the caches in front of it. */
  model: Embedder;
  skillIndex: SkillVectorIndex;
  skillIndexer: SkillIndexer;
  /** Delivers author emails; null without SMTP_URL (they stay unsent in the outbox). */
  emails: EmailSender | null;
  traces: TraceStore;
  /** The address actually bound, e.g. http://127.0.0.1:8080. */
  url: string;
  close(): Promise<void>;
}

// Node's default limit on request headers (16 KiB over HTTP/1.1) bounds the URL; HTTP/2 allows 64 KiB.
const maxUrlLength = 65_536;

// How often grown tables are vacuumed where no autovacuum runs (PGlite).
const databaseMaintenanceMs = 30_000;

const openApiPath = new URL("../gen/openapi.json", import.meta.url);
const mcpToolsPath = new URL("../gen/mcp-tools.json", import.meta.url);
const packageJsonPath = new URL("../package.json", import.meta.url);

export interface StartOptions {
  /** Where log lines go instead of stdout (tests read them). */
  logStream?: DestinationStream;
  /** Indexer settings other than the defaults (tests use small thresholds, so a few writes exercise them). */
  indexer?: Partial<IndexerOptions>;
}

/** How often open gRPC health watches re-check readiness. */
const healthWatchPollMs = 5000;

/** Opens storage, migrates it, and serves every service on one port over gRPC, gRPC-Web, Connect, REST and MCP. */
export async function startApp(config: Config, options: StartOptions = {}): Promise<App> {
  const db = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    poolSize: config.DATABASE_POOL_SIZE,
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
    vector: config.VECTOR_BACKEND === "pgvector",
    pgliteSharedBuffersBytes: config.PGLITE_SHARED_BUFFERS_BYTES,
  });
  const opened: Array<{ close(): Promise<void> }> = [db];
  try {
    await migrate(db);
    const model = await createEmbedder(config);
    // Written texts are embedded on the write path and again by the indexer; queries have their own cache.
    const embedder: Embedder = cachingEmbedder(model, config.EMBEDDING_WRITE_CACHE_BYTES);
    opened.unshift(embedder);
    // Checked before the index is opened, so a refused node creates nothing at its own location.
    const lanceLocation = config.VECTOR_BACKEND === "lancedb" ? lanceLocationOf(config) : undefined;
    if (lanceLocation !== undefined && isObjectStore(lanceLocation)) await checkObjectStore(lanceLocation, config.lanceStorageOptions);
    await checkIndexState(db, embedder.info, config.VECTOR_BACKEND, lanceLocation);
    const vectors = await openVectorIndex(config, db, embedder.info.dimensions);
    opened.unshift(vectors);
    const skillIndex = await openSkillIndex(config, db, embedder.info.dimensions);
    opened.unshift(skillIndex);
    const auth = createAuthenticator(db, config.AGENTMEM_ADMIN_KEY, config.AUTH_CACHE_TTL_MS, config.AUTH_CACHE_BYTES);
    const rateLimits: RateLimitStore | null =
      config.RATE_LIMIT_STORE === "off" ? null : config.RATE_LIMIT_STORE === "postgres" ? postgresRateLimitStore(db) : memoryRateLimitStore();
    if (rateLimits) opened.unshift(rateLimits);
    const admission = createAdmission(rateLimits, config.plans);
    const readiness = createReadiness(() => db.ping(), healthWatchPollMs);
    const fastify = Fastify({
      serverFactory: onePortServer({ graceMs: config.SHUTDOWN_GRACE_MS, onClientError: clientErrorHandler({ auth, admission }) }),
      bodyLimit: config.BODY_LIMIT_BYTES,
      // Above any URL Node accepts, so over-long ids reach the services, which answer not_found or invalid_request.
      routerOptions: { maxParamLength: maxUrlLength },
      frameworkErrors: frameworkErrorHandler({ auth, admission }),
      // Fastify's own two lines per request carry headers; requestLogPlugin writes one line without them.
      logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: "traceId" }),
      genReqId: traceIdOf,
      logger: loggerOptions(config, options.logStream),
    });
    jsonBodies(fastify);
    const maintainer = config.INDEXER_ENABLED
      ? createMaintainerLease(db, `${os.hostname()}/${process.pid}/${randomBytes(4).toString("hex")}`, config.INDEX_MAINTAINER_LEASE_MS, fastify.log)
      : null;
    const maintains = () => maintainer?.holds() ?? false;
    const writes = indexWritersOf(config) === "maintainer" ? maintains : everyNodeWrites;
    const indexer = createIndexer(
      db,
      vectors,
      embedder,
      fastify.log,
      { ...defaultIndexerOptions, keepIndexedMs: readConsistencyMsOf(config), ...options.indexer },
      maintains,
      writes,
    );
    const skillIndexer = createSkillIndexer(db, skillIndex, embedder, fastify.log, maintains, writes);
    const traces = createTraceStore(db, fastify.log);
    const usage = usageMeter(db, config.plans);
    const calls = inFlightGate("the server");
    const guard = { auth, log: fastify.log, admission, calls };
    const embedQuery = cachedQueryEmbedder(model, config.EMBEDDING_CACHE_BYTES);
    const jobVectors = jobVectorReader(db);
    const recall = recallService({
      db,
      vectors,
      embedQuery,
      reranker: config.RERANK_URL
        ? createReranker(
            { url: config.RERANK_URL, model: config.RERANK_MODEL, apiKey: config.RERANK_API_KEY, timeoutMs: config.RERANK_TIMEOUT_MS },
            fastify.log,
          )
        : null,
      rerankCandidates: config.RERANK_CANDIDATES,
      readPending: pendingReader(db, jobVectors),
      traces,
      receiptsEnabled: config.RECEIPTS_ENABLED,
      usage,
    });
    const judge =
      config.CONTRADICTION_JUDGE_URL && config.CONTRADICTION_JUDGE_MODEL
        ? createJudge(
            {
              url: config.CONTRADICTION_JUDGE_URL,
              model: config.CONTRADICTION_JUDGE_MODEL,
              apiKey: config.CONTRADICTION_JUDGE_API_KEY,
              timeoutMs: config.CONTRADICTION_JUDGE_TIMEOUT_MS,
            },
            fastify.log,
          )
        : null;
    const findContradictions = config.CONTRADICTIONS_ENABLED
      ? createContradictionFinder({ db, vectors, embedder, judge, log: fastify.log, candidates: config.CONTRADICTION_CANDIDATES, jobVectors })
      : null;
    const tokens = createTokenCounter();
    opened.unshift(tokens);
    const memories = memoryService(db, {
      usage,
      afterWrite: config.INDEXER_ENABLED ? indexer.notify : () => undefined,
      findContradictions,
      tokens,
      embedWrites: writeEmbedder(embedder, fastify.log),
    });
    const afterSkillWrite = config.INDEXER_ENABLED ? skillIndexer.indexNow : async () => undefined;
    const emails = config.SMTP_URL
      ? createEmailSender(
          db,
          { smtpUrl: config.SMTP_URL, from: config.EMAIL_FROM, maxAttempts: config.EMAIL_MAX_ATTEMPTS, retryBaseMs: config.EMAIL_RETRY_BASE_MS },
          fastify.log,
        )
      : null;
    const bindings: ServiceBinding[] = [
      bindService(MemoryService, memories, { ...guard, role: "agent" }),
      bindService(RecallService, recall, { ...guard, role: "agent" }),
      bindService(
        SkillService,
        skillService(db, {
          index: skillIndex,
          embedQuery,
          usage,
          publishing: skillPublishing(db, { enabled: config.MARKETPLACE_ENABLED, termsVersion: config.marketplaceTerms.version, usage }),
          afterWrite: afterSkillWrite,
        }),
        { ...guard, role: "agent" },
      ),
      bindService(
        MarketplaceService,
        marketplaceService(db, {
          terms: config.marketplaceTerms,
          index: skillIndex,
          embedQuery,
          usage,
          afterWrite: afterSkillWrite,
        }),
        { ...guard, role: "agent", refusal: () => marketplaceRefusal(config.MARKETPLACE_ENABLED) },
      ),
      bindService(ModerationService, moderationService(db, { afterWrite: afterSkillWrite, emailQueued: () => emails?.kick() }), {
        ...guard,
        role: "admin",
      }),
      bindService(StatsService, statsService(db, config.plans), { ...guard, role: "agent" }),
      bindService(AdminService, adminService(db, auth, config.plans), { ...guard, role: "admin" }),
    ];

    restErrorHandling(fastify);
    await fastify.register(requestLogPlugin, { level: config.REQUEST_LOG_LEVEL });
    await fastify.register(metricsPlugin, { indexBacklog: () => indexBacklog(db) });
    await fastify.register(healthPlugin, { readiness, database: db.kind });
    await fastify.register(rateLimitPlugin, { auth, admission });
    await fastify.register(bodyGuardPlugin, { bodyTimeoutMs: config.REQUEST_BODY_TIMEOUT_MS });
    await fastify.register(restRoutes, { bindings, auth });
    const openApi = await readFile(openApiPath, "utf8");
    fastify.get("/api/v1/agent/openapi.json", async (req, reply) => {
      await auth.authenticate(requestHeaders(req.headers));
      return reply.type("application/json").send(openApi);
    });
    const mcpTools = JSON.parse(await readFile(mcpToolsPath, "utf8")) as McpToolDefinition[];
    const { version } = JSON.parse(await readFile(packageJsonPath, "utf8")) as { version: string };
    await fastify.register(mcpRoutes, { bindings, tools: mcpTools, auth, version });
    await fastify.register(consolePlugin, { prefix: consolePrefix, dir: config.CONSOLE_DIR ?? defaultConsoleDir });
    await fastify.register(rootRoutes);
    const grpcServices = [...bindings.map((b) => b.service), Health, ServerReflection, ServerReflectionV1Alpha];
    await fastify.register(connectRoutes, {
      routes: (router) => {
        for (const b of bindings) router.service(b.service, b.impl);
        router.service(Health, healthService(readiness, grpcServices.map((s) => s.typeName)));
        for (const r of reflectionServices(grpcServices, auth)) router.service(r.service, r.impl);
      },
      contextValues: (req) => createContextValues().set(clientAddressKey, req.ip).set(requestLogKey, logFieldsOf(req)),
      maxBytes: config.BODY_LIMIT_BYTES,
      bodyTimeoutMs: config.REQUEST_BODY_TIMEOUT_MS,
      auth,
      keylessServices: new Set([Health.typeName]),
      refusal: (typeName) => bindings.find((b) => b.service.typeName === typeName)?.refusal(),
      admission,
    });

    const url = await fastify.listen({ port: config.PORT, host: config.HOST });
    if (maintainer) {
      maintainer.start();
      // Both catch up with vectors lost or never written (e.g. a new backend) without delaying start-up.
      skillIndexer.start();
      indexer.start();
    }
    emails?.start();
    let closing = false;
    const backfill = backfillContentTokens(db, tokens, fastify.log, () => closing).catch((err: unknown) =>
      fastify.log.error({ err }, "storing token counts of older memories failed; recall counts them as it returns them"),
    );
    const purge = setInterval(() => {
      traces.purge(config.TRACE_RETENTION_DAYS).catch((err: unknown) => fastify.log.error({ err }, "trace purge failed"));
      purgeIdempotencyKeys(db).catch((err: unknown) => fastify.log.error({ err }, "idempotency key purge failed"));
    }, 3_600_000);
    purge.unref();
    let maintaining: Promise<void> | undefined;
    const maintain = () => {
      maintaining ??= db
        .maintain()
        .catch((err: unknown) => fastify.log.error({ err }, "database maintenance failed; tried again at the next interval"))
        .finally(() => (maintaining = undefined));
    };
    maintain();
    const maintenance = setInterval(maintain, databaseMaintenanceMs);
    maintenance.unref();
    return {
      fastify,
      db,
      vectors,
      indexer,
      maintainer,
      model,
      skillIndex,
      skillIndexer,
      emails,
      traces,
      url,
      async close() {
        closing = true;
        // Health watches answer NOT_SERVING and end, so their streams do not hold the shutdown open.
        readiness.shutdown();
        clearInterval(purge);
        clearInterval(maintenance);
        // Storage closes only after everything that uses it has stopped: requests, calls whose client has
        // gone (for as long again as requests get), the token backfill, the indexer (and its
        // reconciliation), the lease and pending traces; the vector index then waits for its searches.
        // Every step runs even if one before it failed (e.g. a database that is already gone).
        const steps: Array<() => Promise<unknown> | undefined> = [
          () => fastify.close(),
          () => calls.close(config.SHUTDOWN_GRACE_MS),
          () => backfill,
          () => indexer.stop(),
          () => skillIndexer.stop(),
          () => emails?.stop(),
          () => maintainer?.stop(),
          () => traces.flush(),
          () => maintaining,
          ...opened.map((resource) => () => resource.close()),
        ];
        let failure: unknown;
        for (const step of steps) {
          await Promise.resolve()
            .then(step)
            .catch((err: unknown) => (failure ??= err));
        }
        if (failure !== undefined) throw failure;
      },
    };
  } catch (err) {
    for (const resource of opened) await resource.close().catch(() => undefined);
    throw err;
  }
}
