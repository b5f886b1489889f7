import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RecallRequestSchema, SearchMode } from "../../gen/agent/v1/recall_pb.js";
import { jobVectorReader, type JobVectorReader } from "../../src/memories/job-vectors.js";
import { pendingReader } from "../../src/recall/pending-candidates.js";
import { runRecall } from "../../src/recall/recall-engine.js";
import { parseRecallRequest } from "../../src/recall/recall-rules.js";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

// Recall reads the pending jobs in one statement and their vectors after it (each job's once). The indexer
// may complete a job between the two: its memory is then in the index, which recall searches next.
describe.each(backends)("recall's read of pending writes (%s)", (backend) => {
  let server: TestServer;
  let agent: ReturnType<typeof rest>;
  beforeAll(async () => {
    // The test runs the indexer itself (app.indexer.drain()), exactly where it wants a job completed.
    server = await startTestServer(backend, { INDEXER_ENABLED: "false", CONTRADICTIONS_ENABLED: "false" });
    agent = rest(server.url, await server.createKey("acme", "agent-1"));
  });
  afterAll(() => server?.close());

  const write = async (content: string) => {
    const res = await agent("POST", "/api/v1/agent/memories", { content, type: "fact" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.ids[0] as string;
    const [row] = await server.app.db.query<{ workspace_id: string }>("select workspace_id from memories where id = $1", [id]);
    return { id, workspaceId: row!.workspace_id };
  };

  const recallWith = async (jobVectors: JobVectorReader, workspaceId: string, query: string) => {
    const { app } = server;
    const deps = { db: app.db, vectors: app.vectors, embedQuery: async (t: string) => (await app.model.embed([t]))[0]!, readPending: pendingReader(app.db, jobVectors) };
    const q = parseRecallRequest(create(RecallRequestSchema, { query, searchMode: SearchMode.SEMANTIC, limit: 10 }), false, new Date());
    const result = await runRecall(deps, q, { workspaceId, container: "agent-1" }, { workspaceId, containers: ["agent-1"] });
    return result.returned.map((c) => c.memory.id);
  };

  it("finds a pending memory by the vector its job carries", async () => {
    const { id, workspaceId } = await write("The user's cat Mirzo is allergic to chicken");
    expect(await recallWith(jobVectorReader(server.app.db), workspaceId, "what can the pet not eat?")).toContain(id);
  });

  it("leaves a job completed between the statement and the vector read to the index", async () => {
    const { id, workspaceId } = await write("Backups of the Tarvo database run every night at two");
    const { app } = server;
    let completed = 0;
    const reader = jobVectorReader(app.db);
    // Between the pending statement and the read of its jobs' vectors, the indexer completes every job.
    const racing: JobVectorReader = async (seqs) => {
      completed += await app.indexer.drain();
      return reader(seqs);
    };
    expect(await recallWith(racing, workspaceId, "when is the data backed up?")).toContain(id);
    expect(completed).toBeGreaterThan(0);
    expect(await app.db.query("select 1 from index_outbox where memory_id = $1", [id])).toEqual([]);
  });
});
