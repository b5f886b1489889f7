import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpcClient, type GrpcClient } from "../support/grpc-client.js";
import { adminKey, backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

// The RPCs the console added: what a memory shadowed, usage per day of the period, and the workspace
// list, each over REST and gRPC, on both databases. The servers start without a console build, which
// they must survive, answering 503 at /console.

type Call = ReturnType<typeof rest>;

const today = () => new Date().toISOString().slice(0, 10);

describe.each(backends)("console RPCs (%s)", (backend) => {
  let server: TestServer;
  let agent: Call;
  let admin: Call;
  let grpcMemories: GrpcClient;
  let grpcStats: GrpcClient;
  let grpcAdmin: GrpcClient;
  let otherContainer: Call;
  const unbuilt = mkdtempSync(path.join(os.tmpdir(), "agentmem-unbuilt-"));

  beforeAll(async () => {
    server = await startTestServer(backend, { CONSOLE_DIR: unbuilt });
    const key = await server.createKey("console-ws");
    agent = rest(server.url, key);
    otherContainer = rest(server.url, await server.createKey("console-ws", "elsewhere"));
    admin = rest(server.url, adminKey);
    grpcMemories = grpcClient(server.url, "MemoryService", key);
    grpcStats = grpcClient(server.url, "StatsService", key);
    grpcAdmin = grpcClient(server.url, "AdminService", adminKey);
  });
  afterAll(async () => {
    for (const c of [grpcMemories, grpcStats, grpcAdmin]) c?.close();
    await server?.close();
    rmSync(unbuilt, { recursive: true, force: true });
  });

  it("starts without a console build and answers 503 at /console, saying how to build it", async () => {
    const res = await fetch(`${server.url}/console/`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain("npm run build");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    // The API is not affected.
    const api = await fetch(`${server.url}/api/v1/admin/workspaces`, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(api.status).toBe(200);
    expect(api.headers.get("content-security-policy")).toBeNull();
  });

  it("tells a key which workspace, container and author handle it belongs to, over REST and gRPC", async () => {
    const workspaceLevel = (await agent("GET", "/api/v1/agent/stats")).body;
    expect(workspaceLevel.workspace).toBe("console-ws");
    expect(workspaceLevel).not.toHaveProperty("container");
    expect(workspaceLevel).not.toHaveProperty("authorHandle");
    expect((await otherContainer("GET", "/api/v1/agent/stats")).body).toMatchObject({ workspace: "console-ws", container: "elsewhere" });
    expect(await grpcStats.call("getStats", {})).toMatchObject({ workspace: "console-ws" });
  });

  it("sends a browser at the root to the console, and has the icon browsers ask for", async () => {
    const root = await fetch(`${server.url}/`, { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/console/");
    const icon = await fetch(`${server.url}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/x-icon");
    const bytes = Buffer.from(await icon.arrayBuffer());
    // An ICO header: reserved 0, type 1 (icon), one image.
    expect([...bytes.subarray(0, 6)]).toEqual([0, 0, 1, 0, 1, 0]);
  });

  it("lists the memories a memory shadowed, newest first, paged, within the key's scope", async () => {
    const store = async (content: string, containers: string[]) =>
      (await agent("POST", "/api/v1/agent/memories", { content, type: "fact", containers })).body.ids[0] as string;
    const a = await store("The build server runs Jenkins 2.401", ["agent-1"]);
    const b = await store("Deploys happen on Tuesdays after standup", ["agent-1"]);
    const c = await store("Release notes are written in Notion", ["elsewhere"]);
    const replaced = await agent("POST", "/api/v1/agent/memories", {
      content: "The build server is now a GitHub Actions runner",
      type: "fact",
      containers: ["agent-1", "elsewhere"],
      supersedes: [a, b, c],
    });
    const d = replaced.body.ids[0] as string;
    expect(replaced.body.results[0].supersedes.sort()).toEqual([a, b, c].sort());

    const all = await agent("GET", `/api/v1/agent/memories/${d}/shadowed`);
    expect(all.status).toBe(200);
    expect(all.body.memories.map((m: { id: string }) => m.id)).toEqual([c, b, a]);
    expect(all.body.memories[0]).toMatchObject({ state: "shadowed", supersededBy: d });
    expect(all.body.nextPageToken).toBeUndefined();

    const first = await agent("GET", `/api/v1/agent/memories/${d}/shadowed?pageSize=2`);
    expect(first.body.memories.map((m: { id: string }) => m.id)).toEqual([c, b]);
    const second = await agent("GET", `/api/v1/agent/memories/${d}/shadowed?pageSize=2&pageToken=${first.body.nextPageToken}`);
    expect(second.body).toEqual({ memories: [expect.objectContaining({ id: a })] });

    // A container-scoped key sees only what lives in its container.
    const scoped = await otherContainer("GET", `/api/v1/agent/memories/${d}/shadowed`);
    expect(scoped.body.memories.map((m: { id: string }) => m.id)).toEqual([c]);
    // Memories the key cannot see, and unknown ids, are not found; bad paging names the field.
    expect((await otherContainer("GET", `/api/v1/agent/memories/${a}/shadowed`)).status).toBe(404);
    expect((await agent("GET", "/api/v1/agent/memories/mem_nope/shadowed")).body.error.code).toBe("not_found");
    const bad = await agent("GET", `/api/v1/agent/memories/${d}/shadowed?pageSize=0`);
    expect(bad.body.error).toMatchObject({ code: "invalid_request", details: { field: "pageSize" } });
    expect((await agent("GET", `/api/v1/agent/memories/${d}/shadowed?pageToken=xyz`)).body.error.details).toMatchObject({ field: "pageToken", rule: "format" });
    expect((await agent("GET", `/api/v1/agent/memories/${a}/shadowed`)).body).toEqual({ memories: [] });

    const overGrpc = (await grpcMemories.call("listShadowedMemories", { id: d, pageSize: 2 })) as { memories: Array<{ id: string; state: string }>; nextPageToken: string };
    expect(overGrpc.memories.map((m) => m.id)).toEqual([c, b]);
    expect(overGrpc.memories[0]!.state).toBe("MEMORY_STATE_SHADOWED");
    expect(overGrpc.nextPageToken).toBe(first.body.nextPageToken);
  });

  it("counts recalls and cost units per day of the period, summing to the period's totals", async () => {
    const before = await agent("GET", "/api/v1/agent/stats/history");
    expect(before.status).toBe(200);
    const days: Array<{ date: string; recalls: number; costUnits: number }> = before.body.days;
    expect(before.body.periodStart.slice(0, 10)).toBe(days[0]!.date);
    expect(days.at(-1)!.date).toBe(today());
    expect(days).toHaveLength(Number(today().slice(8, 10)));
    for (const day of days.slice(0, -1)) expect(day).toMatchObject({ recalls: 0, costUnits: 0 });

    expect((await agent("POST", "/api/v1/agent/recall", { query: "which build server do we use?" })).status).toBe(200);
    const after = await agent("GET", "/api/v1/agent/stats/history");
    const todayBefore = days.at(-1)!;
    const todayAfter = after.body.days.at(-1);
    expect(todayAfter).toEqual({ date: today(), recalls: todayBefore.recalls + 1, costUnits: todayBefore.costUnits + 10 });

    // Every charge of this fresh workspace was made with daily counts: the days sum to the period.
    const stats = (await agent("GET", "/api/v1/agent/stats")).body;
    const sum = (field: "recalls" | "costUnits") => after.body.days.reduce((n: number, d: Record<string, number>) => n + d[field]!, 0);
    expect(sum("recalls")).toBe(stats.recallsUsed);
    expect(sum("costUnits")).toBe(stats.costUsed);
    expect(stats.costUsed).toBeGreaterThan(10);

    const overGrpc = (await grpcStats.call("getUsageHistory", {})) as { days: Array<{ date: string; recalls: number }>; resetsAt: string };
    expect(overGrpc.days.at(-1)).toMatchObject({ date: today(), recalls: todayAfter.recalls });
    expect(overGrpc.resetsAt).toBe(after.body.resetsAt);
  });

  it("lists workspaces with their plans, profiles and stored items", async () => {
    expect((await admin("PUT", "/api/v1/admin/workspaces/console-ws/plan", { plan: "pro" })).status).toBe(200);
    expect((await admin("PUT", "/api/v1/admin/workspaces/console-ws/profile", { authorHandle: "console", email: "ops@console.example" })).status).toBe(200);
    await server.createKey("console-a");
    await server.createKey("console-b");

    const all = await admin("GET", "/api/v1/admin/workspaces");
    expect(all.status).toBe(200);
    const names = all.body.workspaces.map((w: { workspace: string }) => w.workspace);
    expect(names).toEqual(["console-a", "console-b", "console-ws"]);
    expect(all.body.workspaces[2]).toMatchObject({
      workspace: "console-ws",
      plan: "pro",
      defaultPlan: false,
      authorHandle: "console",
      email: "ops@console.example",
      memoriesStored: 4,
      skillsStored: 0,
    });
    expect(all.body.workspaces[0]).toMatchObject({ workspace: "console-a", plan: "unlimited", defaultPlan: true, memoriesStored: 0 });
    expect(all.body.workspaces[0].authorHandle).toBeUndefined();

    const first = await admin("GET", "/api/v1/admin/workspaces?pageSize=2");
    expect(first.body.workspaces.map((w: { workspace: string }) => w.workspace)).toEqual(["console-a", "console-b"]);
    const second = await admin("GET", `/api/v1/admin/workspaces?pageSize=2&pageToken=${first.body.nextPageToken}`);
    expect(second.body.workspaces.map((w: { workspace: string }) => w.workspace)).toEqual(["console-ws"]);
    expect(second.body.nextPageToken).toBeUndefined();
    expect((await admin("GET", "/api/v1/admin/workspaces?pageSize=201")).body.error.details).toMatchObject({ field: "pageSize" });
    expect((await admin("GET", "/api/v1/admin/workspaces?pageToken=%21%21")).body.error.details).toMatchObject({ field: "pageToken", rule: "format" });
    expect((await agent("GET", "/api/v1/admin/workspaces")).status).toBe(403);

    const overGrpc = (await grpcAdmin.call("listWorkspaces", { pageSize: 2 })) as { workspaces: Array<{ workspace: string }>; nextPageToken: string };
    expect(overGrpc.workspaces.map((w) => w.workspace)).toEqual(["console-a", "console-b"]);
    expect(overGrpc.nextPageToken).toBe(first.body.nextPageToken);
  });
});
