import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { lanceCacheBytes } from "../search/vector/lance-cache-meter.js";

export interface MetricsOptions {
  /** Memory writes not yet in the vector index (index_outbox jobs), read at each scrape. */
  indexBacklog: () => Promise<number>;
}

/**
 * Prometheus metrics at GET /metrics: process defaults, a latency histogram per route, LanceDB's cache
 * size and the indexer's backlog.
 */
async function metrics(app: FastifyInstance, options: MetricsOptions): Promise<void> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "agentmem_" });
  const requests = new Histogram({
    name: "agentmem_http_request_duration_seconds",
    help: "Request latency by route (REST path or RPC), method and status.",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  new Gauge({
    name: "agentmem_lancedb_cache_bytes",
    help: "Bytes in LanceDB's index and metadata caches (capped by LANCEDB_INDEX_CACHE_BYTES and LANCEDB_METADATA_CACHE_BYTES).",
    registers: [registry],
    collect() {
      this.set(lanceCacheBytes());
    },
  });
  new Gauge({
    name: "agentmem_index_backlog_jobs",
    help: "Memory writes committed but not yet written to the vector index (recall finds them meanwhile through the outbox).",
    registers: [registry],
    async collect() {
      // A database that cannot answer leaves the other metrics readable (NaN: unknown).
      this.set(await options.indexBacklog().catch(() => Number.NaN));
    },
  });
  app.addHook("onResponse", async (req, reply) => {
    requests.observe(
      { method: req.method, route: req.routeOptions.url ?? "unmatched", status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
  app.get("/metrics", async (_req, reply) => reply.type(registry.contentType).send(await registry.metrics()));
}

// Not encapsulated: the latency hook must see every route of the server, not only /metrics.
export const metricsPlugin = fp(metrics, { name: "agentmem-metrics" });
