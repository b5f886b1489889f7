import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RecallService } from "../../gen/agent/v1/recall_pb.js";
import { startApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import type { TraceRecord } from "../../src/recall/trace-store.js";
import { grpc, grpcClient } from "../support/grpc-client.js";
import { adminKey, backends, freshPostgresDatabase, rest, startTestServer, type TestServer } from "../support/test-server.js";

// A trace is visible only inside the scope its recall searched, and a recall
// answers only once its own trace is stored, whatever other requests do.

describe.each(backends)("recall traces stay inside their scope (%s)", (backend) => {
  let server: TestServer;
  let agentOne: ReturnType<typeof rest>;
  let oneKey: string;
  const traceOf: Record<string, string> = {};

  beforeAll(async () => {
    server = await startTestServer(backend);
    oneKey = await server.createKey("acme", "agent-1");
    agentOne = rest(server.url, oneKey);
    const workspace = rest(server.url, await server.createKey("acme"));
    const recalls: Record<string, object> = {
      workspaceWide: { query: "secret roadmap" },
      twoContainers: { query: "secret roadmap", containers: ["agent-1", "agent-2"] },
      onlyOne: { query: "secret roadmap", containers: ["agent-1"] },
    };
    for (const [name, body] of Object.entries(recalls)) {
      const res = await workspace("POST", "/api/v1/agent/recall", { ...body, searchMode: "keyword" });
      expect(res.status).toBe(200);
      traceOf[name] = res.body._meta.traceId;
    }
    const own = await agentOne("POST", "/api/v1/agent/recall", { query: "own question", searchMode: "keyword" });
    traceOf.own = own.body._meta.traceId;
    // A workspace-level key still reads every trace of its workspace.
    for (const id of Object.values(traceOf)) expect((await workspace("GET", `/api/v1/agent/recall/traces/${id}`)).status).toBe(200);
  });
  afterAll(() => server?.close());

  it("hides recalls beyond the key's container from a container-scoped key over REST", async () => {
    expect((await agentOne("GET", `/api/v1/agent/recall/traces/${traceOf.workspaceWide}`)).status).toBe(404);
    expect((await agentOne("GET", `/api/v1/agent/recall/traces/${traceOf.twoContainers}`)).status).toBe(404);
    expect((await agentOne("GET", `/api/v1/agent/recall/traces/${traceOf.onlyOne}`)).status).toBe(200);
    const listed = await agentOne("GET", "/api/v1/agent/recall/traces");
    expect(listed.body.traces.map((t: { traceId: string }) => t.traceId).sort()).toEqual([traceOf.onlyOne, traceOf.own].sort());
    const filtered = await agentOne("GET", "/api/v1/agent/recall/traces?container=agent-1");
    expect(filtered.body.traces.map((t: { traceId: string }) => t.traceId).sort()).toEqual([traceOf.onlyOne, traceOf.own].sort());
  });

  it("refuses a creation-time window that holds no instant, as listing memories does", async () => {
    const res = await agentOne("GET", "/api/v1/agent/recall/traces?createdAfter=2026-02-01&createdBefore=2026-01-01");
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual({ field: "createdBefore", rule: "after_created_after" });
  });

  it("records the request with the spec's enum names, read over REST and Connect", async () => {
    const viaRest = await agentOne("GET", `/api/v1/agent/recall/traces/${traceOf.own}`);
    expect(viaRest.body.request).toEqual({ query: "own question", searchMode: "keyword" });
    const connect = createClient(RecallService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
    const viaConnect = await connect.getRecallTrace({ traceId: traceOf.own }, { headers: { authorization: `Bearer ${oneKey}` } });
    expect(viaConnect.request).toEqual({ query: "own question", searchMode: "keyword" });
  });

  it("hides them over Connect and gRPC too", async () => {
    const connect = createClient(RecallService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
    const headers = { authorization: `Bearer ${oneKey}` };
    await expect(connect.getRecallTrace({ traceId: traceOf.workspaceWide }, { headers })).rejects.toMatchObject({ code: 5 });
    const page = await connect.listRecallTraces({}, { headers });
    expect(page.traces.map((t) => t.traceId)).not.toContain(traceOf.workspaceWide);

    const client = grpcClient(server.url, "RecallService", oneKey);
    try {
      await expect(client.call("getRecallTrace", { traceId: traceOf.twoContainers })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
      const listed = (await client.call("listRecallTraces", {})) as { traces: Array<{ traceId: string }> };
      expect(listed.traces.map((t) => t.traceId).sort()).toEqual([traceOf.onlyOne, traceOf.own].sort());
    } finally {
      client.close();
    }
  });
});

describe.each(backends)("recall trace writes (%s)", (backend) => {
  let server: TestServer;
  let workspaceId: string;
  beforeAll(async () => {
    server = await startTestServer(backend);
    await server.createKey("acme", "agent-1");
    await server.createKey("other", "agent-1");
    [{ id: workspaceId }] = (await server.app.db.query<{ id: string }>("select id from workspaces where name = 'acme'")) as [{ id: string }];
  });
  afterAll(() => server?.close());

  const trace = (id: string, query: string): TraceRecord => ({
    id,
    workspaceId,
    keyId: "key_test",
    containers: ["agent-1"],
    query,
    request: { query },
    candidates: [],
    returnedIds: [],
    receipt: {},
    meta: {},
    embedMs: 0,
    createdAt: new Date(),
  });

  it("fails only the trace that cannot be stored, never the others written with it", async () => {
    // Recorded in one turn of the event loop, so all four go to the database in one batch.
    const outcomes = await Promise.allSettled([
      server.app.traces.record(trace("trc_good_a", "first")),
      server.app.traces.record(trace("trc_bad", "cannot\u0000be stored")),
      server.app.traces.record(trace("trc_good_b", "second")),
      server.app.traces.record(trace("trc_good_c", "third")),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
    const stored = await server.app.db.query<{ id: string }>("select id from recall_traces where id like 'trc_%' order by id");
    expect(stored.map((r) => r.id)).toEqual(["trc_good_a", "trc_good_b", "trc_good_c"]);
  });

  it("answers a recall only once its trace is stored, under concurrent recalls of several tenants", async () => {
    const acme = rest(server.url, await server.createKey("acme", "agent-1"));
    const other = rest(server.url, await server.createKey("other", "agent-1"));
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? acme : other)("POST", "/api/v1/agent/recall", { query: `question ${i}`, searchMode: "keyword" })),
    );
    const ids = answers.map((a) => {
      expect(a.status).toBe(200);
      return a.body._meta.traceId as string;
    });
    // Read straight from storage, not through the node that wrote them.
    const stored = await server.app.db.query<{ id: string }>("select id from recall_traces where id = any($1::text[])", [ids]);
    expect(stored.map((r) => r.id).sort()).toEqual([...ids].sort());
  });
});

describe("a recall's trace on a second node", () => {
  const apps: App[] = [];
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let lance: string;
  beforeAll(async () => {
    database = await freshPostgresDatabase();
    lance = await mkdtemp(path.join(os.tmpdir(), "agentmem-traces-lance-"));
    for (const indexer of ["true", "false"]) {
      const config = loadConfig({
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: "memory://",
        LANCEDB_URI: lance,
        LOG_LEVEL: "warn",
        AGENTMEM_ADMIN_KEY: adminKey,
        DATABASE_URL: database.url,
        INDEXER_ENABLED: indexer,
      });
      apps.push(await startApp(config));
    }
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await database?.drop();
    await rm(lance, { recursive: true, force: true });
  });

  it("is readable on another node as soon as the recall has answered", async () => {
    const created = await fetch(`${apps[0]!.url}/api/v1/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ workspace: "acme", container: "agent-1" }),
    });
    const { key } = (await created.json()) as { key: string };
    const [first, second] = apps.map((app) => rest(app.url, key));
    for (let i = 0; i < 5; i++) {
      const recall = await first!("POST", "/api/v1/agent/recall", { query: `where is item ${i}`, searchMode: "keyword" });
      expect(recall.status).toBe(200);
      const read = await second!("GET", `/api/v1/agent/recall/traces/${recall.body._meta.traceId}`);
      expect(read.status).toBe(200);
      expect(read.body.query).toBe(`where is item ${i}`);
    }
  });
});
