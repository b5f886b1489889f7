import { create } from "@bufbuild/protobuf";
import { createContextValues, type HandlerContext } from "@connectrpc/connect";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CreateMemoriesRequestSchema, CreateOutcome, MemoryType, type CreateMemoriesRequest } from "../../gen/agent/v1/memory_pb.js";
import { principalKey } from "../../src/accounts/principal.js";
import { groupedCreates } from "../../src/memories/create-groups.js";
import type { CreateResponse } from "../../src/memories/create-receipt.js";
import { killHard, spawnUnindexedServer } from "../support/child-server.js";
import { indexedIds } from "../support/indexed-ids.js";
import { adminKey, backends, rest, startTestServer, type TestServer } from "../support/test-server.js";
import { planEnv } from "../usage/limits-env.js";

const memories = "/api/v1/agent/memories";

describe("grouping of concurrent single creates", () => {
  const ctxOf = (keyId: string, headers: Record<string, string> = {}) =>
    ({
      values: createContextValues().set(principalKey, { role: "agent", keyId, workspaceId: "ws", plan: null } as never),
      requestHeader: new Headers(headers),
    }) as unknown as HandlerContext;
  const single = (content: string) => create(CreateMemoriesRequestSchema, { content, type: MemoryType.FACT });
  /** Answers each memory of a call as stored, recording the calls' sizes. */
  function recorder() {
    const calls: number[] = [];
    const fn = async (req: CreateMemoriesRequest): Promise<CreateResponse> => {
      const items = req.memories.length > 0 ? req.memories : [req];
      calls.push(items.length);
      await new Promise((r) => setTimeout(r, 5));
      const ids = items.map((m) => `id-${m.content}`);
      return {
        ids,
        memories: items.map((m, i) => ({ id: ids[i], content: m.content })),
        results: ids.map((id) => ({ id, outcome: CreateOutcome.STORED })),
        contradictions: ids.map((id) => ({ memoryId: id, conflictsWith: "older" })),
      };
    };
    return { calls, fn };
  }

  it("writes single creates of one key sent in the same turn as one batch, answering each its own part", async () => {
    const { calls, fn } = recorder();
    const grouped = groupedCreates(fn, { maxGroup: 100, maxRunning: 1, besideAfter: 1 });
    const answers = await Promise.all(["a", "b", "c"].map((c) => grouped(single(c), ctxOf("k1"))));
    expect(calls).toEqual([3]);
    expect(answers.map((a) => a.ids)).toEqual([["id-a"], ["id-b"], ["id-c"]]);
    expect(answers.map((a) => a.contradictions!.map((c) => c.memoryId))).toEqual([["id-a"], ["id-b"], ["id-c"]]);
  });

  it("groups requests that arrive while a group is written, up to maxGroup, and never mixes keys", async () => {
    const { calls, fn } = recorder();
    const grouped = groupedCreates(fn, { maxGroup: 2, maxRunning: 1, besideAfter: 1 });
    const first = grouped(single("a"), ctxOf("k1"));
    await new Promise((r) => setImmediate(r));
    const rest = ["b", "c", "d"].map((c) => grouped(single(c), ctxOf("k1")));
    const other = grouped(single("e"), ctxOf("k2"));
    await Promise.all([first, ...rest, other]);
    expect(calls.sort()).toEqual([1, 1, 1, 2]);
  });

  it("starts a group beside a running one only once besideAfter requests wait", async () => {
    const { calls, fn } = recorder();
    const grouped = groupedCreates(fn, { maxGroup: 100, maxRunning: 2, besideAfter: 3 });
    const first = grouped(single("a"), ctxOf("k1"));
    await new Promise((r) => setImmediate(r));
    const two = ["b", "c"].map((c) => grouped(single(c), ctxOf("k1")));
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([1]);
    const three = ["d", "e", "f"].map((c) => grouped(single(c), ctxOf("k1")));
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([1, 5]);
    await Promise.all([first, ...two, ...three]);
  });

  it("runs a request with an Idempotency-Key, a dry run or a batch alone", async () => {
    const { calls, fn } = recorder();
    const grouped = groupedCreates(fn);
    await Promise.all([
      grouped(single("a"), ctxOf("k1", { "idempotency-key": "x" })),
      grouped(create(CreateMemoriesRequestSchema, { content: "b", type: MemoryType.FACT, dryRun: true }), ctxOf("k1")),
      grouped(create(CreateMemoriesRequestSchema, { memories: [{ content: "c", type: MemoryType.FACT }] }), ctxOf("k1")),
    ]);
    expect(calls).toEqual([1, 1, 1]);
  });
});

describe.each(backends)("concurrent single creates through the server (%s)", (backend) => {
  let server: TestServer;
  let containers = 0;
  beforeAll(async () => {
    server = await startTestServer(backend, planEnv);
  });
  afterAll(() => server?.close());
  const agent = async (workspace = "acme") => rest(server.url, await server.createKey(workspace, `groups-${++containers}`));

  it("answers each request its own memory, readable as soon as it is answered", async () => {
    const call = await agent();
    const contents = Array.from({ length: 12 }, (_, i) => `The user's locker number ${i} is by the north door`);
    const answers = await Promise.all(contents.map((content) => call("POST", memories, { content, type: "fact" })));
    for (const [i, res] of answers.entries()) {
      expect(res.status).toBe(200);
      expect(res.body.ids).toHaveLength(1);
      expect(res.body.memories[0].content).toBe(contents[i]);
      expect(res.body.results[0].outcome).toBe("stored");
      expect((await call("GET", `${memories}/${res.body.ids[0]}`)).body.content).toBe(contents[i]);
    }
  });

  it("fails only the request that cannot be written: invalid, or naming a memory that does not exist", async () => {
    const call = await agent();
    const answers = await Promise.all([
      call("POST", memories, { content: "The user's bike is green", type: "fact" }),
      call("POST", memories, { content: "", type: "fact" }),
      call("POST", memories, { content: "The user's car is blue", type: "fact", supersedes: ["mem_doesnotexist"] }),
      call("POST", memories, { content: "The user's boat is white", type: "fact" }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 400, 404, 200]);
    expect((await call("GET", `${memories}?pageSize=10`)).body.memories.map((m: { content: string }) => m.content).sort()).toEqual([
      "The user's bike is green",
      "The user's boat is white",
    ]);
  });

  it("stores the same content sent twice at once once", async () => {
    const call = await agent();
    const [a, b] = await Promise.all([0, 1].map(() => call("POST", memories, { content: "The user's cat is called Miso", type: "fact" })));
    expect(a!.body.ids).toEqual(b!.body.ids);
    expect([a!.body.results[0].outcome, b!.body.results[0].outcome].sort()).toEqual(["duplicate", "stored"]);
  });

  it("a request over the plan's memories cap fails alone; the others are stored", async () => {
    const workspace = `ws-groups-${Math.random().toString(36).slice(2, 8)}`;
    const call = await agent(workspace);
    expect((await rest(server.url, adminKey)("PUT", `/api/v1/admin/workspaces/${workspace}/plan`, { plan: "small" })).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 7 }, (_, i) => call("POST", memories, { content: `The user owns plant number ${i}`, type: "fact" })));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(2);
  });
});

describe("single creates written together, then a kill -9", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "agentmem-groups-kill-"));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("lose none of the acknowledged memories: the next start has and indexes every one", async () => {
    const { url: base, child, key } = await spawnUnindexedServer(dataDir, adminKey);
    const call = rest(base, key);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => call("POST", memories, { content: `Server rack ${i} is in room B`, type: "fact" })));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    await killHard(child);

    const server = await startTestServer("pglite", { DATA_DIR: dataDir });
    try {
      await server.app.indexer.drain();
      const indexed = await indexedIds(server.app.vectors);
      for (const a of answers) expect(indexed).toContain(a.body.ids[0]);
    } finally {
      await server.close();
    }
  });
});
