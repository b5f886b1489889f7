import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpcClient } from "../support/grpc-client.js";
import { backends, connectJson, rest, startTestServer, type TestServer } from "../support/test-server.js";

// The judge (any OpenAI-compatible chat API, scripted here) is asked about the pairs the detector could
// not settle, not only about very similar ones: "Ticket tracker of the ingestion team: Jira." / "Ingestion
// team tickets have been fully migrated to Linear." share a topic and announce a change, but their cosine
// with the built-in model is 0.46 and no frame names the attribute. Over REST, Connect and gRPC.

const older = "Ticket tracker of the ingestion team: Jira.";
const newer = "Ingestion team tickets have been fully migrated to Linear.";

describe.each(backends)("the judge decides the detector's doubts (%s)", (backend) => {
  let server: TestServer;
  let judge: Server;
  let verdict = true;
  const asked: string[] = [];

  beforeAll(async () => {
    judge = createServer((req, res) => {
      let raw = "";
      req.on("data", (c) => (raw += c));
      req.on("end", () => {
        const listing: string = JSON.parse(raw).messages[1].content;
        asked.push(listing);
        const pairs = (listing.match(/^\d+\. OLDER/gm) ?? []).length;
        const verdicts = Array.from({ length: pairs }, (_, i) => ({ pair: i + 1, contradiction: verdict, reason: verdict ? "migrated" : "two trackers" }));
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: JSON.stringify({ verdicts }) } }] }));
      });
    });
    await new Promise<void>((resolve) => judge.listen(0, "127.0.0.1", resolve));
    const { port } = judge.address() as AddressInfo;
    server = await startTestServer(backend, { CONTRADICTION_JUDGE_URL: `http://127.0.0.1:${port}/v1`, CONTRADICTION_JUDGE_MODEL: "judge-model" });
  });
  afterAll(async () => {
    await server?.close();
    judge?.closeAllConnections();
    await new Promise((resolve) => judge?.close(resolve));
  });

  let containers = 0;
  const keyOfOwnContainer = () => server.createKey("acme", `judge-${++containers}`);

  it("over REST: a doubtful pair reaches the judge, whose yes shadows the older memory", async () => {
    verdict = true;
    const call = rest(server.url, await keyOfOwnContainer());
    const first = (await call("POST", "/api/v1/agent/memories", { content: older, type: "fact" })).body.ids[0];
    const res = await call("POST", "/api/v1/agent/memories", { content: newer, type: "fact" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(asked.at(-1)).toContain(`OLDER: ${JSON.stringify(older)}\n   NEWER: ${JSON.stringify(newer)}`);
    expect(res.body.results[0].shadowed).toEqual([{ memoryId: first, rule: "judge", reason: "judge: migrated", snippet: older }]);
    expect((await call("GET", `/api/v1/agent/memories/${first}`)).body.state).toBe("shadowed");
  });

  it("over REST: the judge's no keeps the older memory beside the new one, with its reason", async () => {
    verdict = false;
    const call = rest(server.url, await keyOfOwnContainer());
    const first = (await call("POST", "/api/v1/agent/memories", { content: older, type: "fact" })).body.ids[0];
    const res = await call("POST", "/api/v1/agent/memories", { content: newer, type: "fact" });
    expect(res.body.contradictions).toEqual([]);
    expect(res.body.results[0].keptBeside).toEqual([{ memoryId: first, snippet: older, reason: "judge: two trackers" }]);
    expect((await call("GET", `/api/v1/agent/memories/${first}`)).body.state).toBe("active");
  });

  it("is asked to confirm an update the rules found, such as a move told with a time phrase", async () => {
    verdict = true;
    const call = rest(server.url, await keyOfOwnContainer());
    await call("POST", "/api/v1/agent/memories", { content: "The user lives in Berlin.", type: "fact" });
    const res = await call("POST", "/api/v1/agent/memories", { content: "The user moved to Munich last month.", type: "fact" });
    expect(asked.at(-1)).toContain('OLDER: "The user lives in Berlin."');
    expect(res.body.contradictions).toEqual([expect.objectContaining({ rule: "judge", reason: "judge: migrated", shadowed: true })]);
  });

  it("over Connect and gRPC: the same verdicts, with the transport's own names", async () => {
    verdict = true;
    const key = await keyOfOwnContainer();
    const call = connectJson(server.url, key);
    const connect = async (body: object) => {
      const res = await call("MemoryService", "CreateMemories", body);
      expect(res.status).toBe(200);
      return res.body as { ids: string[]; results: Array<{ shadowed?: unknown[]; outcome: string }> };
    };
    const first = (await connect({ content: older, type: "MEMORY_TYPE_FACT" })).ids[0];
    const viaConnect = await connect({ content: newer, type: "MEMORY_TYPE_FACT" });
    expect(viaConnect.results[0]).toMatchObject({ outcome: "CREATE_OUTCOME_STORED", shadowed: [{ memoryId: first, rule: "judge" }] });

    verdict = false;
    const grpcMemories = grpcClient(server.url, "MemoryService", key);
    try {
      const a = (await grpcMemories.call("createMemories", { content: "Ticket tracker of the billing team: Jira.", type: "MEMORY_TYPE_FACT" })) as { ids: string[] };
      const b = (await grpcMemories.call("createMemories", { content: "Billing team tickets have been fully migrated to Linear.", type: "MEMORY_TYPE_FACT" })) as {
        results: Array<{ keptBeside: unknown[]; shadowed: unknown[] }>;
      };
      expect(b.results[0]!.shadowed).toEqual([]);
      // The ingestion team's tickets, written above, are a doubt of the same kind and are kept beside too.
      expect(b.results[0]!.keptBeside).toContainEqual({ memoryId: a.ids[0], snippet: "Ticket tracker of the billing team: Jira.", reason: "judge: two trackers" });
    } finally {
      grpcMemories.close();
    }
  });
});
