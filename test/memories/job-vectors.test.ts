import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobVectorReader } from "../../src/memories/job-vectors.js";
import { vectorFromBytes } from "../../src/search/vector/records.js";
import { backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

describe.each(backends)("the vectors of indexing jobs, read once (%s)", (backend) => {
  let server: TestServer;
  let jobs: Array<{ seq: string; vector: Float32Array }>;
  beforeAll(async () => {
    // Nothing is indexed, so every write's job stays in the outbox with its vector.
    server = await startTestServer(backend, { INDEXER_ENABLED: "false" });
    const agent = rest(server.url, await server.createKey("acme", "agent-1"));
    const res = await agent("POST", "/api/v1/agent/memories", { memories: [{ content: "The user works at Google", type: "fact" }, { content: "The deploy window is Friday", type: "fact" }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const rows = await server.app.db.query<{ seq: string; vector: Uint8Array }>("select seq::text as seq, vector from index_outbox where vector is not null order by seq");
    jobs = rows.map((r) => ({ seq: r.seq, vector: vectorFromBytes(r.vector) }));
    expect(jobs).toHaveLength(2);
  });
  afterAll(() => server?.close());

  it("answers each job's stored vector, and a job's first answer from then on", async () => {
    const read = jobVectorReader(server.app.db);
    const first = await read(jobs.map((j) => j.seq));
    expect([...first.keys()]).toEqual(jobs.map((j) => j.seq));
    jobs.forEach((j) => expect(first.get(j.seq)).toEqual(j.vector));

    // Never done by the service (a job's vector does not change); here it shows where an answer comes from.
    const [changed] = jobs;
    await server.app.db.query("update index_outbox set vector = $1 where seq = $2", [new Uint8Array(new Float32Array(changed!.vector.length).fill(0.5).buffer), changed!.seq]);
    expect((await read([changed!.seq])).get(changed!.seq)).toEqual(changed!.vector);
    expect((await jobVectorReader(server.app.db)([changed!.seq])).get(changed!.seq)).toEqual(new Float32Array(changed!.vector.length).fill(0.5));
  });

  it("leaves out a job gone from the outbox and a null seq, and answers null for a job without a vector", async () => {
    const [, other] = jobs;
    await server.app.db.query("update index_outbox set vector = null where seq = $1", [other!.seq]);
    const answers = await jobVectorReader(server.app.db)([other!.seq, "999999999", null]);
    expect([...answers.entries()]).toEqual([[other!.seq, null]]);
  });
});
