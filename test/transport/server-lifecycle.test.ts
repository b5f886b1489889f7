import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryService } from "../../gen/agent/v1/memory_pb.js";
import { grpcClient, grpcHealthCheck, grpcHealthClient } from "../support/grpc-client.js";
import { rest, startsProcessesTimeoutMs, startTestServer, type TestServer } from "../support/test-server.js";

describe("server lifecycle and operations endpoints", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("pglite");
  });
  afterAll(() => server?.close());

  it("answers liveness, readiness and Prometheus metrics without a key", async () => {
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: "ok" });
    expect(await (await fetch(`${server.url}/readyz`)).json()).toEqual({ status: "ready", database: "pglite" });
    await fetch(`${server.url}/api/v1/agent/memories/mem_x`);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/agentmem_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/agent\/memories\/:id",status="401"\} 1/);
    expect(metrics).toContain("agentmem_process_resident_memory_bytes");
    // The memories' and skills' LanceDB tables share one capped cache session, and opening them reads into it.
    expect(Number(/^agentmem_lancedb_cache_bytes (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
  });

  it("keeps idle HTTP/1.1 connections open 72 s, as Fastify's own server does, and tells clients so", async () => {
    // Node's default of 5 s reset connections that clients (and load balancers) reused after an idle moment.
    const agent = new http.Agent({ keepAlive: true });
    try {
      const header = await new Promise<unknown>((resolve, reject) => {
        http.get(`${server.url}/healthz`, { agent }, (res) => {
          res.resume();
          resolve(res.headers["keep-alive"]);
        }).on("error", reject);
      });
      expect(header).toBe("timeout=72");
    } finally {
      agent.destroy();
    }
  });

  it("reports the indexer's backlog in /metrics: writes not yet in the vector index", async () => {
    const paused = await startTestServer("pglite", { INDEXER_ENABLED: "false" });
    try {
      const backlog = async () => Number(/^agentmem_index_backlog_jobs (\d+)$/m.exec(await (await fetch(`${paused.url}/metrics`)).text())?.[1]);
      expect(await backlog()).toBe(0);
      const call = rest(paused.url, await paused.createKey("backlog", "main"));
      const written = await call("POST", "/api/v1/agent/memories", { memories: [{ content: "the deploy runs at noon", type: "fact" }, { content: "lunch is at one", type: "fact" }] });
      expect(written.status).toBe(200);
      expect(await backlog()).toBe(2);
      await paused.app.indexer.drain();
      expect(await backlog()).toBe(0);
    } finally {
      await paused.close();
    }
  }, startsProcessesTimeoutMs);

  it("reports readiness failure when the database is gone", async () => {
    const doomed = await startTestServer("pglite");
    // The indexer would poll the closed database until close(); closing only Fastify, as this test
    // did, left it polling ("indexing failed … PGlite is closed") for the rest of the test run.
    await doomed.app.indexer.stop();
    await doomed.app.db.close();
    const res = await fetch(`${doomed.url}/readyz`);
    expect(res.status).toBe(503);
    // Metrics stay readable; the backlog, which only the database knows, is unknown (prom-client writes "Nan").
    const metrics = await fetch(`${doomed.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^agentmem_index_backlog_jobs NaN$/im);
    // gRPC health checking reports the same readiness.
    const health = grpcHealthClient(doomed.url);
    expect(await grpcHealthCheck(health, "")).toEqual({ status: "NOT_SERVING" });
    health.close();
    // close() still ends everything else, and reports the database it could not close a second time.
    await expect(doomed.app.close()).rejects.toThrow(/closed/);
  }, startsProcessesTimeoutMs);
});

describe("graceful shutdown", () => {
  it("closes promptly while HTTP/1.1 keep-alive, h2c and gRPC clients hold connections open", async () => {
    const server = await startTestServer("pglite", { SHUTDOWN_GRACE_MS: "20000" });
    const key = await server.createKey("acme", "agent-1");

    const agent = new http.Agent({ keepAlive: true });
    await new Promise<void>((resolve, reject) => {
      http.get(`${server.url}/healthz`, { agent }, (res) => res.resume().on("end", resolve)).on("error", reject);
    });
    const h2 = createClient(MemoryService, createConnectTransport({ baseUrl: server.url, httpVersion: "2" }));
    await h2.createMemories({ content: "h2c keeps its session", type: 1 }, { headers: { authorization: `Bearer ${key}` } });
    const grpc = grpcClient(server.url, "MemoryService", key);
    await grpc.call("createMemories", { content: "grpc keeps its channel", type: "MEMORY_TYPE_FACT" });

    // A client that never closes an idle connection itself (Node's agent does after 4 s, fetch after 3 s).
    const raw = net.connect(Number(new URL(server.url).port), "127.0.0.1");
    raw.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
    await new Promise((resolve) => raw.once("data", resolve));
    const rawClosed = new Promise((resolve) => raw.once("close", resolve));

    const started = Date.now();
    await server.app.fastify.close();
    // Idle connections are closed at once, not left to the clients' keep-alive timeouts or the 20 s grace period.
    expect(Date.now() - started).toBeLessThan(2000);
    await rawClosed;
    await server.close();
    grpc.close();
    agent.destroy();
  }, startsProcessesTimeoutMs);
});

describe("shutdown with recalls in flight", () => {
  for (const graceMs of ["0", "5000"]) {
    it(`answers each recall 200 or closes its connection, never a 500 from a closed index (grace ${graceMs} ms)`, async () => {
      const server = await startTestServer("pglite", { SHUTDOWN_GRACE_MS: graceMs });
      const key = await server.createKey("acme", "agent-1");
      const agent = rest(server.url, key);
      const created = await agent("POST", "/api/v1/agent/memories", {
        memories: Array.from({ length: 20 }, (_, i) => ({ content: `Shutdown fact number ${i} about the build farm`, type: "fact" })),
      });
      expect(created.status).toBe(200);
      await server.app.indexer.drain();

      // Distinct queries, so each one embeds and searches instead of hitting the query cache; fewer
      // than the key's 32 concurrent requests.
      const recalls = Array.from({ length: 24 }, (_, i) =>
        agent("POST", "/api/v1/agent/recall", { query: `build farm fact ${i}`, limit: 5 }).then(
          (res) => res.status,
          () => "closed" as const,
        ),
      );
      // Closes once the first recall has been answered: the others are queued or running.
      await Promise.race(recalls);
      await server.close();
      const outcomes = await Promise.all(recalls);
      // 503: sent by Fastify to a request that arrives on a kept-alive connection once closing has begun.
      expect(outcomes.filter((o) => o !== 200 && o !== 503 && o !== "closed")).toEqual([]);
    }, startsProcessesTimeoutMs);
  }
});

