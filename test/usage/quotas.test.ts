import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryService, MemoryType } from "../../gen/agent/v1/memory_pb.js";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { countTokens } from "../../src/recall/tokens.js";
import { secondsToReset } from "../../src/usage/period.js";
import { grpc, grpcClient } from "../support/grpc-client.js";
import { adminKey, backends, rest, startTestServer, type TestServer } from "../support/test-server.js";
import { planEnv } from "./limits-env.js";

const fact = (content: string) => ({ content, type: "fact" });

describe.each(backends)("plan quotas, cost ceiling and stats (%s)", (backend) => {
  let server: TestServer;
  const admin = () => rest(server.url, adminKey);

  async function workspaceOn(plan: string): Promise<{ workspace: string; key: string }> {
    const workspace = `ws-${plan}-${Math.random().toString(36).slice(2, 8)}`;
    const key = await server.createKey(workspace, "agent-1");
    expect((await admin()("PUT", `/api/v1/admin/workspaces/${workspace}/plan`, { plan })).status).toBe(200);
    return { workspace, key };
  }
  async function storedRows(workspace: string): Promise<number> {
    const [row] = await server.app.db.query<{ n: number }>(
      "select count(*)::int as n from memories m join workspaces w on w.id = m.workspace_id where w.name = $1",
      [workspace],
    );
    return row!.n;
  }

  beforeAll(async () => {
    server = await startTestServer(backend, planEnv);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("refuses a batch that would pass the memories cap with 429 and Retry-After, writing none of it", async () => {
    const { workspace, key } = await workspaceOn("small");
    const call = rest(server.url, key);
    expect((await call("POST", "/api/v1/agent/memories", { memories: ["a", "b", "c", "d"].map(fact) })).status).toBe(200);

    const refused = await call("POST", "/api/v1/agent/memories", { memories: [fact("e"), fact("f")] });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: "quota_exhausted", details: { limit: "memoriesStored", plan: "small" } });
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(refused.body.error.details.retryAfter).toBe(String(retryAfter));
    expect(Math.abs(retryAfter - secondsToReset(new Date()))).toBeLessThan(60);
    expect(await storedRows(workspace)).toBe(4);

    const last = await call("POST", "/api/v1/agent/memories", fact("e"));
    expect(last.status).toBe(200);
    expect((await call("POST", "/api/v1/agent/memories", fact("f"))).status).toBe(429);
    // Deleting frees room at once.
    expect((await call("DELETE", `/api/v1/agent/memories/${last.body.ids[0]}`)).status).toBe(200);
    expect((await call("GET", "/api/v1/agent/stats")).body).toMatchObject({ memoriesStored: 4, remaining: { memoriesStored: 1 } });
    expect((await call("POST", "/api/v1/agent/memories", fact("f"))).status).toBe(200);
    expect(await storedRows(workspace)).toBe(5);
  });

  it("refuses the same over gRPC, with Retry-After in the trailers and quota_exhausted in ErrorInfo", async () => {
    const { workspace, key } = await workspaceOn("small");
    const client = grpcClient(server.url, "MemoryService", key);
    try {
      const refused = await client.callWithMetadata("createMemories", {
        memories: Array.from({ length: 6 }, (_, i) => ({ content: `m${i}`, type: "MEMORY_TYPE_FACT" })),
      });
      expect(refused.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(Number(refused.trailers.get("retry-after")[0])).toBeGreaterThan(0);
      expect(await storedRows(workspace)).toBe(0);
    } finally {
      client.close();
    }
    const memories = createClient(MemoryService, createGrpcTransport({ baseUrl: server.url }));
    const err = await memories
      .createMemories(
        { memories: Array.from({ length: 6 }, (_, i) => ({ content: `m${i}`, type: MemoryType.FACT })) },
        { headers: { authorization: `Bearer ${key}` } },
      )
      .catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).code).toBe(Code.ResourceExhausted);
    const info = (err as ConnectError).findDetails(ErrorInfoSchema)[0];
    expect(info).toMatchObject({ reason: "quota_exhausted", metadata: { limit: "memoriesStored" } });
    expect((err as ConnectError).metadata.get("retry-after")).toBe(info!.metadata.retryAfter);
  });

  it("lets only one of two concurrent batches that together pass the cap through", async () => {
    const { workspace, key } = await workspaceOn("small");
    const call = rest(server.url, key);
    const results = await Promise.all([
      call("POST", "/api/v1/agent/memories", { memories: ["a", "b", "c"].map(fact) }),
      call("POST", "/api/v1/agent/memories", { memories: ["d", "e", "f"].map(fact) }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 429]);
    expect(await storedRows(workspace)).toBe(3);
  });

  it("counts recalls up to the monthly cap, and stats calls never count", async () => {
    const { key } = await workspaceOn("small");
    const call = rest(server.url, key);
    for (let i = 0; i < 3; i++) expect((await call("POST", "/api/v1/agent/recall", { query: "anything" })).status).toBe(200);
    const refused = await call("POST", "/api/v1/agent/recall", { query: "anything" });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: "quota_exhausted", details: { limit: "recallsPerMonth" } });
    expect(refused.headers.get("retry-after")).toBe(refused.body.error.details.retryAfter);

    const first = await call("GET", "/api/v1/agent/stats");
    const second = await call("GET", "/api/v1/agent/stats");
    expect(second.body).toEqual(first.body);
    expect(first.body).toMatchObject({
      plan: "small",
      recallsUsed: 3,
      costUsed: 30,
      limits: { memoriesStored: 5, recallsPerMonth: 3, costUnitsPerMonth: 1_000_000 },
      remaining: { memoriesStored: 5, recalls: 0, costUnits: 1_000_000 - 30 },
      rateLimits: { sustainedPerSecond: 100, burstPerSecond: 500, burstSeconds: 10, concurrency: 32, source: "plan" },
    });
    const { periodStart, resetsAt } = first.body;
    const now = new Date();
    expect(new Date(periodStart).getTime()).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    expect(new Date(resetsAt).getTime()).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  });

  it("admits exactly as many concurrent recalls as the monthly cap leaves", async () => {
    const { key } = await workspaceOn("small");
    const call = rest(server.url, key);
    expect((await call("POST", "/api/v1/agent/recall", { query: "first" })).status).toBe(200);
    // Sent together, they are charged as one group, which would cross the cap: each is then charged alone.
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => call("POST", "/api/v1/agent/recall", { query: `at once ${i}` })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 429, 429, 429, 429]);
    for (const r of results.filter((r) => r.status === 429)) expect(r.body.error).toMatchObject({ code: "quota_exhausted", details: { limit: "recallsPerMonth" } });
    expect((await call("GET", "/api/v1/agent/stats")).body).toMatchObject({ recallsUsed: 3, costUsed: 30 });
  });

  it("refuses writes and recalls past the cost ceiling with 402 cost_ceiling, writing nothing", async () => {
    const { workspace, key } = await workspaceOn("cheap");
    const call = rest(server.url, key);
    const text = "The staging database is rebuilt from the nightly snapshot at 02:00 UTC.";
    const tokens = countTokens(text);
    expect(tokens).toBeGreaterThan(10);
    expect(tokens).toBeLessThanOrEqual(20);
    expect((await call("POST", "/api/v1/agent/memories", fact(text))).status).toBe(200);
    // Another text: the same one again would be a duplicate, which writes and costs nothing.
    const other = "The production database is backed up to cold storage every Sunday at noon by the platform team.";
    expect(countTokens(other)).toBeGreaterThan(30 - tokens);
    const refused = await call("POST", "/api/v1/agent/memories", fact(other));
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ code: "cost_ceiling", details: { limit: "costUnitsPerMonth", plan: "cheap" } });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await storedRows(workspace)).toBe(1);

    // A recall costs 10 units: one fits under the ceiling of 30 only while tokens + 10 <= 30.
    const recall = await call("POST", "/api/v1/agent/recall", { query: "staging database" });
    expect(recall.status).toBe(tokens + 10 <= 30 ? 200 : 402);
    let last = recall;
    while (last.status === 200) last = await call("POST", "/api/v1/agent/recall", { query: "staging database" });
    expect(last.body.error.code).toBe("cost_ceiling");
    const stats = (await call("GET", "/api/v1/agent/stats")).body;
    expect(stats.costUsed).toBeLessThanOrEqual(30);
    expect(stats.remaining.costUnits).toBe(30 - stats.costUsed);
  });

  it("keeps stats exact under concurrent creates, deletes and recalls", async () => {
    const { workspace, key } = await workspaceOn("wide");
    const call = rest(server.url, key);
    const batches = Array.from({ length: 20 }, (_, b) => Array.from({ length: 5 }, (_, i) => `note ${b}-${i} about deploys`));
    const [created] = await Promise.all([
      Promise.all(batches.map((contents) => call("POST", "/api/v1/agent/memories", { memories: contents.map(fact) }))),
      Promise.all(Array.from({ length: 15 }, () => call("POST", "/api/v1/agent/recall", { query: "deploys" }))),
    ]);
    expect(created.every((r) => r.status === 200)).toBe(true);
    const ids = created.flatMap((r) => r.body.ids as string[]);
    const deleted = await Promise.all(ids.slice(0, 7).map((id) => call("DELETE", `/api/v1/agent/memories/${id}`)));
    expect(deleted.every((r) => r.status === 200)).toBe(true);
    // Updating content costs its tokens; other fields cost nothing.
    const patched = await call("PATCH", `/api/v1/agent/memories/${ids[10]}`, { content: "rewritten note" });
    expect(patched.status).toBe(200);
    expect((await call("PATCH", `/api/v1/agent/memories/${ids[11]}`, { tags: ["x"] })).status).toBe(200);

    const tokens = batches.flat().reduce((sum, c) => sum + countTokens(c), 0) + countTokens("rewritten note");
    const stats = (await call("GET", "/api/v1/agent/stats")).body;
    expect(stats).toMatchObject({ plan: "wide", memoriesStored: 93, recallsUsed: 15, costUsed: tokens + 150 });
    expect(stats.limits).toEqual({});
    expect(stats.remaining).toEqual({});
    expect(await storedRows(workspace)).toBe(93);
  });

  it("lets admins set plans and, where the plan allows, per-key rate limits", async () => {
    const unknown = await admin()("PUT", "/api/v1/admin/workspaces/acme/plan", { plan: "platinum" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toEqual({ field: "plan", rule: "enum" });

    const { workspace, key } = await workspaceOn("small");
    const keys = await admin()("GET", `/api/v1/admin/keys?workspace=${workspace}`);
    const keyId = keys.body.keys[0].id as string;
    const notAllowed = await admin()("PUT", `/api/v1/admin/keys/${keyId}/rate-limits`, { sustainedPerSecond: 1000 });
    expect(notAllowed.status).toBe(400);
    expect(notAllowed.body.error.details).toEqual({ field: "id", rule: "plan" });

    const moved = await admin()("PUT", `/api/v1/admin/workspaces/${workspace}/plan`, { plan: "wide" });
    expect(moved.body).toMatchObject({ workspace, plan: "wide", rateLimits: { concurrency: 200 } });
    const bad = await admin()("PUT", `/api/v1/admin/keys/${keyId}/rate-limits`, { sustainedPerSecond: 1000 });
    expect(bad.status).toBe(400); // burst (500) below the sustained rate
    expect(bad.body.error).toMatchObject({
      message: "burstPerSecond: must be at least sustainedPerSecond",
      details: { field: "burstPerSecond", rule: "at_least_sustained" },
    });
    const negative = await admin()("PUT", `/api/v1/admin/keys/${keyId}/rate-limits`, { sustainedPerSecond: -1 });
    expect(negative.body.error).toMatchObject({ message: "sustainedPerSecond: must be greater than 0", details: { field: "sustainedPerSecond", rule: "min" } });

    const set = await admin()("PUT", `/api/v1/admin/keys/${keyId}/rate-limits`, { sustainedPerSecond: 1000, burstPerSecond: 2000 });
    expect(set.body.rateLimits).toEqual({ sustainedPerSecond: 1000, burstPerSecond: 2000, burstSeconds: 10, concurrency: 200, source: "key" });
    const stats = await rest(server.url, key)("GET", "/api/v1/agent/stats");
    expect(stats.body.rateLimits).toMatchObject({ sustainedPerSecond: 1000, source: "key" });
    expect(stats.headers.get("x-ratelimit-limit")).toBe("2000");

    const cleared = await admin()("PUT", `/api/v1/admin/keys/${keyId}/rate-limits`, {});
    expect(cleared.body.rateLimits).toMatchObject({ sustainedPerSecond: 100, source: "plan" });
    expect((await admin()("PUT", "/api/v1/admin/keys/key_nope/rate-limits", {})).status).toBe(404);
  });
});
