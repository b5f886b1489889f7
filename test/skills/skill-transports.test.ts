import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SkillMaturity, SkillService } from "../../gen/agent/v1/skill_pb.js";
import { grpc, grpcClient, type GrpcClient } from "../support/grpc-client.js";
import { backends, rest, startsProcessesTimeoutMs, startTestServer, type TestServer } from "../support/test-server.js";

const skill = (slug: string) => ({
  slug,
  name: slug,
  description: "Writes database migration scripts that add columns without locking large tables.",
  content: "# Migrations\n",
});

describe.each(backends)("skills over Connect and gRPC (%s)", (backend) => {
  let server: TestServer;
  let key: string;
  let grpcSkills: GrpcClient;

  beforeAll(async () => {
    server = await startTestServer(backend);
    key = await server.createKey("acme", "agent-1");
    grpcSkills = grpcClient(server.url, "SkillService", key);
  });
  afterAll(async () => {
    grpcSkills?.close();
    await server?.close();
  });

  it("serves every route over Connect", async () => {
    const client = createClient(SkillService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
    const headers = { authorization: `Bearer ${key}` };
    const created = await client.createSkill({ ...skill("connect-skill"), maturity: SkillMaturity.BETA }, { headers });
    expect(created.skill).toMatchObject({ slug: "connect-skill", version: 1, maturity: SkillMaturity.BETA });
    const id = created.skill!.id;
    expect((await client.getSkill({ slug: "connect-skill" }, { headers })).skill?.id).toBe(id);
    expect((await client.updateSkill({ id, content: "# v2\n" }, { headers })).skill?.version).toBe(2);
    const found = await client.searchSkills({ query: "alter a big table safely" }, { headers });
    expect(found.skills[0]?.id).toBe(id);
    expect((await client.listSkills({}, { headers })).skills.map((s) => s.id)).toContain(id);
    const exported = await client.exportSkill({ id, version: 1 }, { headers });
    expect(exported.content).toContain("# Migrations\n");
    const imported = await client.importSkill({ content: exported.content }, { headers });
    expect(imported).toMatchObject({ created: false, skill: { id, version: 3, content: "# Migrations\n" } });
    expect((await client.deprecateSkill({ id }, { headers })).skill?.deprecatedAt).toBeDefined();

    const clash = await client.createSkill(skill("connect-skill"), { headers }).catch((e: unknown) => e);
    expect(clash).toBeInstanceOf(ConnectError);
    expect((clash as ConnectError).code).toBe(Code.AlreadyExists);
    const stale = await client.updateSkill({ id, name: "x", expectedVersion: 1 }, { headers }).catch((e: unknown) => e);
    expect((stale as ConnectError).code).toBe(Code.Aborted);
  });

  it("serves every route over gRPC, with the spec's codes", async () => {
    const created = (await grpcSkills.call("createSkill", { ...skill("grpc-skill"), tags: ["g"] })) as { skill: { id: string; version: number } };
    expect(created.skill.version).toBe(1);
    const id = created.skill.id;
    expect(((await grpcSkills.call("getSkill", { id })) as { skill: { slug: string } }).skill.slug).toBe("grpc-skill");
    expect(((await grpcSkills.call("updateSkill", { id, description: "Adds columns to large tables without downtime." })) as { skill: { version: number } }).skill.version).toBe(2);
    const found = (await grpcSkills.call("searchSkills", { query: "add a column without downtime", tags: ["g"] })) as { skills: Array<{ id: string }> };
    expect(found.skills[0]!.id).toBe(id);
    const listed = (await grpcSkills.call("listSkills", { tags: ["g"] })) as { skills: Array<{ id: string }> };
    expect(listed.skills.map((s) => s.id)).toEqual([id]);
    const exported = (await grpcSkills.call("exportSkill", { id })) as { content: string };
    const imported = (await grpcSkills.call("importSkill", { content: exported.content })) as { created: boolean };
    expect(imported.created).toBe(false);
    expect(((await grpcSkills.call("deprecateSkill", { id, message: "old" })) as { skill: { state: string } }).skill.state).toBe("SKILL_STATE_DEPRECATED");

    const missing = await grpcSkills.callWithMetadata("getSkill", { id: "skl_01jzzzzzzzzzzzzzzzzzzzzzzz" });
    expect(missing.error?.code).toBe(grpc.status.NOT_FOUND);
    const bad = await grpcSkills.callWithMetadata("createSkill", { ...skill("x"), description: "" });
    expect(bad.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(bad.error?.details).toContain("description");
    const forged = await grpcSkills.callWithMetadata("createSkill", { ...skill("forged"), name: "Evil\r\nBcc: x@evil.test" });
    expect(forged.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(forged.error?.details).toContain("name: must be one line");
  });
});

describe("skill search on pgvector, and the outbox across a restart", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "agentmem-skills-"));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("indexes a skill written while no node indexed, after the restart", async () => {
    const env = { DATA_DIR: dataDir, VECTOR_BACKEND: "pgvector" };
    let server = await startTestServer("pglite", { ...env, INDEXER_ENABLED: "false" });
    const key = await server.createKey("acme", "agent-1");
    let agent = rest(server.url, key);
    const created = (await agent("POST", "/api/v1/agent/skills", skill("queued-skill"))).body.skill;
    const deprecatedOne = (await agent("POST", "/api/v1/agent/skills", { ...skill("other-skill"), description: "Plans team offsites and books venues." })).body.skill;
    const before = await agent("POST", "/api/v1/agent/skills/search", { query: "lock-free schema change", searchMode: "semantic" });
    expect(before.body.skills).toEqual([]);
    await server.close();

    server = await startTestServer("pglite", env);
    try {
      await server.app.skillIndexer.drain();
      agent = rest(server.url, key);
      const after = await agent("POST", "/api/v1/agent/skills/search", { query: "lock-free schema change", searchMode: "semantic", limit: 1 });
      expect(after.body.skills.map((s: { id: string }) => s.id)).toEqual([created.id]);
      // Deprecation reaches the pgvector filter columns too.
      await agent("POST", "/api/v1/agent/skills/deprecate", { id: created.id });
      const hidden = await agent("POST", "/api/v1/agent/skills/search", { query: "lock-free schema change", searchMode: "semantic" });
      expect(hidden.body.skills.map((s: { id: string }) => s.id)).toEqual([deprecatedOne.id]);
    } finally {
      await server.close();
    }
  }, startsProcessesTimeoutMs);
});
