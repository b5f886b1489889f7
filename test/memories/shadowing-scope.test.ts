import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpcClient } from "../support/grpc-client.js";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

const memories = "/api/v1/agent/memories";

// A container-scoped key may not name a memory shared with another container in supersedes (403);
// contradiction detection must not shadow it either, only report it.
describe.each(backends)("automatic shadowing stays within the key's write scope (%s)", (backend) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(backend);
  });
  afterAll(() => server?.close());

  /** A memory in containers a and b, written by a workspace key, and the keys of one fresh workspace. */
  async function sharedMemory(workspace: string, content: string) {
    const workspaceKey = await server.createKey(workspace);
    const scopedKey = await server.createKey(workspace, "a");
    const res = await rest(server.url, workspaceKey)("POST", memories, { content, type: "fact", containers: ["a", "b"] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await server.app.indexer.drain();
    return { workspaceKey, scopedKey, olderId: res.body.ids[0] as string };
  }

  it("over REST: a key scoped to one of its containers reports the contradiction without shadowing; a workspace key shadows", async () => {
    const { workspaceKey, scopedKey, olderId } = await sharedMemory("scope-rest", "The company office is in Berlin");
    const scoped = rest(server.url, scopedKey);
    const explicit = await scoped("POST", memories, { content: "The company office moved", type: "fact", supersedes: [olderId] });
    expect(explicit.status).toBe(403);

    const newer = await scoped("POST", memories, { content: "The company office is in Munich", type: "fact" });
    expect(newer.status, JSON.stringify(newer.body)).toBe(200);
    expect(newer.body.contradictions).toEqual([
      expect.objectContaining({ memoryId: newer.body.ids[0], conflictsWith: olderId, shadowed: false }),
    ]);
    // The receipt keeps the older memory beside the new one, and says why.
    const reason = "different value: Berlin → Munich (not shadowed: it also lives in a container this key cannot write)";
    expect(newer.body.results).toEqual([
      {
        id: newer.body.ids[0],
        supersedes: [],
        outcome: "stored",
        shadowed: [],
        keptBeside: [{ memoryId: olderId, snippet: "The company office is in Berlin", reason }],
        summary: `stored; kept beside ${olderId} (${reason})`,
      },
    ]);
    expect((await scoped("GET", `${memories}/${olderId}`)).body.state).toBe("active");

    // The same through PATCH of a memory the scoped key owns.
    const own = await scoped("POST", memories, { content: "Team lunch is on Monday", type: "fact" });
    await server.app.indexer.drain();
    const patched = await scoped("PATCH", `${memories}/${own.body.ids[0]}`, { content: "The company office is in Hamburg" });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.contradictions).toEqual(
      expect.arrayContaining([expect.objectContaining({ conflictsWith: olderId, shadowed: false })]),
    );
    expect((await scoped("GET", `${memories}/${olderId}`)).body.state).toBe("active");

    const byWorkspace = await rest(server.url, workspaceKey)("POST", memories, { content: "The company office is in Cologne", type: "fact", containers: ["a"] });
    expect(byWorkspace.status, JSON.stringify(byWorkspace.body)).toBe(200);
    expect(byWorkspace.body.contradictions).toEqual(
      expect.arrayContaining([expect.objectContaining({ conflictsWith: olderId, shadowed: true })]),
    );
    expect((await scoped("GET", `${memories}/${olderId}`)).body).toMatchObject({ state: "shadowed", supersededBy: byWorkspace.body.ids[0] });
  });

  it("over gRPC: the same, with the shadowed field", async () => {
    const { workspaceKey, scopedKey, olderId } = await sharedMemory("scope-grpc", "The build server runs Debian 11");
    const scoped = grpcClient(server.url, "MemoryService", scopedKey);
    const workspace = grpcClient(server.url, "MemoryService", workspaceKey);
    try {
      const newer = (await scoped.call("createMemories", { content: "The build server runs Debian 12", type: "MEMORY_TYPE_FACT" })) as any;
      expect(newer.contradictions).toEqual([expect.objectContaining({ memoryId: newer.ids[0], conflictsWith: olderId, shadowed: false })]);
      expect(((await scoped.call("getMemory", { id: olderId })) as any).state).toBe("MEMORY_STATE_ACTIVE");

      const byWorkspace = (await workspace.call("createMemories", {
        content: "The build server runs Debian 13",
        type: "MEMORY_TYPE_FACT",
        containers: ["a"],
      })) as any;
      expect(byWorkspace.contradictions).toEqual(
        expect.arrayContaining([expect.objectContaining({ conflictsWith: olderId, shadowed: true })]),
      );
      expect(((await scoped.call("getMemory", { id: olderId })) as any).state).toBe("MEMORY_STATE_SHADOWED");
    } finally {
      scoped.close();
      workspace.close();
    }
  });
});
