import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { standaloneSchema, type Json } from "../../src/codegen/json-schema.js";
import { mcpToolName } from "../../src/transport/mcp/tool-definitions.js";
import { restRouteOf } from "../../src/transport/rest/rest-route.js";
import { adminKey, backends, rest, startTestServer, type TestServer } from "../support/test-server.js";
import { planEnv } from "../usage/limits-env.js";
import { connectHttp, expectToolError, toolJson } from "./mcp-client.js";
import { agentServices } from "./proto-services.js";

// The tools agents need for memories, recall, skills and the marketplace.
const requiredTools = [
  "memory_create",
  "memory_get",
  "memory_update",
  "memory_delete",
  "memory_versions",
  "recall",
  "stats",
  "skill_create",
  "skill_get",
  "skill_search",
  "skill_list",
  "skill_update",
  "skill_import",
  "skill_export",
  "skill_yank",
  "skill_upgrade",
  "marketplace_search",
  "marketplace_get",
  "marketplace_versions",
  "marketplace_install",
  "marketplace_fork",
  "marketplace_report",
  "skill_appeal",
];

// Marketplace RPCs annotated as tools.
const marketplaceTools = (await agentServices())
  .filter((service) => service.typeName === "agent.v1.MarketplaceService")
  .flatMap((service) => service.methods)
  .filter((method) => mcpToolName(method) !== undefined);

/** A schema without its descriptions: proto comments are not in the run-time descriptors. */
function withoutDescriptions(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutDescriptions);
  if (typeof schema !== "object" || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema as Json)
      .filter(([key, value]) => !(key === "description" && typeof value === "string"))
      .map(([key, value]) => [key, key === "properties" || key === "$defs" ? mapValues(value as Json) : withoutDescriptions(value)]),
  );
}
/** Every property of an input schema, nested objects, arrays and $defs included, with its path. */
function inputProperties(schema: Json): { path: string; schema: Json }[] {
  const defs = (schema.$defs ?? {}) as Record<string, Json>;
  const found: { path: string; schema: Json }[] = [];
  const seen = new Set<string>();
  const visit = (node: Json, path: string): void => {
    if (typeof node.$ref === "string") {
      const name = node.$ref.split("/").pop()!;
      if (seen.has(name)) return;
      seen.add(name);
      return visit(defs[name]!, path);
    }
    for (const [key, child] of Object.entries((node.properties ?? {}) as Record<string, Json>)) {
      found.push({ path: `${path}${key}`, schema: child });
      visit(child, `${path}${key}.`);
    }
    if (node.items) visit(node.items as Json, path.replace(/\.$/, "[]."));
    if (node.additionalProperties && typeof node.additionalProperties === "object") visit(node.additionalProperties as Json, path);
  };
  visit(schema, "");
  return found;
}

const mapValues = (o: Json) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, withoutDescriptions(v)]));

const skillMd = `---
name: release-notes
description: Writes release notes from merged pull requests, grouped by area.
license: MIT
---
# Release notes

Group the merged pull requests by area, then summarise each group in one line.
`;

describe.each(backends)("MCP over Streamable HTTP (%s)", (backend) => {
  let server: TestServer;
  let key: string;
  let otherTenantKey: string;
  let client: Client;
  let otherTenant: Client;

  beforeAll(async () => {
    server = await startTestServer(backend, planEnv);
    key = await server.createKey("acme", "agent-1");
    otherTenantKey = await server.createKey("globex", "agent-1");
    client = await connectHttp(server.url, key);
    otherTenant = await connectHttp(server.url, otherTenantKey);
  });
  afterAll(async () => {
    await client?.close();
    await otherTenant?.close();
    await server?.close();
  });

  it("lists one tool per annotated RPC, with the request and response messages' schemas and the RPC's comment", async () => {
    const methods = (await agentServices()).flatMap((service) => service.methods).filter((m) => mcpToolName(m) !== undefined);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(methods.map((m) => mcpToolName(m)).sort());
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(requiredTools));
    for (const method of methods) {
      const tool = tools.find((t) => t.name === mcpToolName(method))!;
      expect(withoutDescriptions(tool.inputSchema), `${tool.name} input`).toEqual(standaloneSchema(method.input, { singleItem: true }));
      expect(withoutDescriptions(tool.outputSchema), `${tool.name} output`).toEqual(standaloneSchema(method.output));
      expect(tool.description, tool.name).toMatch(/\w+.*\./);
    }
  });

  it("describes every input property of every tool for a model, in the tool's JSON names, with what is required at the top level", async () => {
    const { tools } = await client.listTools();
    const protoNames = new Set(
      (await agentServices()).flatMap((service) => service.methods).flatMap((m) => [...m.input.fields, ...m.output.fields]).map((f) => f.name),
    );
    for (const tool of tools) {
      const texts = [tool.description ?? ""];
      for (const { path, schema } of inputProperties(tool.inputSchema as Json)) {
        expect(schema.description, `${tool.name}: ${path} has no description`).toEqual(expect.stringMatching(/\w/));
        texts.push(schema.description as string);
      }
      for (const text of texts) {
        // Backticked names are the names the tool takes: JSON names, not proto field names.
        const snake = [...text.matchAll(/`([a-z0-9]+(?:_[a-z0-9]+)+)`/g)].map((m) => m[1]!).filter((n) => protoNames.has(n));
        expect(snake, `${tool.name}: ${text}`).toEqual([]);
        // Advice a tool call cannot follow: tool calls send no headers of their own.
        expect(text, tool.name).not.toMatch(/Idempotency-Key|header/i);
      }
    }
    const create = tools.find((t) => t.name === "memory_create")!;
    expect(create.inputSchema.required).toEqual(["content", "type"]);
    expect(create.inputSchema).not.toHaveProperty("oneOf");
    const type = (create.inputSchema.properties as Record<string, Json>).type!;
    for (const value of ["fact", "lesson", "directive", "preference", "contact", "bookmark"]) {
      expect(type.description).toMatch(new RegExp(`^- \`${value}\`: [A-Z].+\\.?$`, "m"));
    }
  });

  it("reports the package's name and version", async () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(client.getServerVersion()).toEqual({ name: "agentmem", version: pkg.version });
  });

  it("answers recall leanly by default: id, type, content, validity and supersedes; the receipt and scores on request", async () => {
    const agent = await connectHttp(server.url, await server.createKey("lean-recall", "agent-1"));
    try {
      const facts = Array.from({ length: 9 }, (_, i) => `The staging cluster number ${i + 1} runs Kubernetes 1.${20 + i} in region eu-west-${i + 1}`);
      for (const content of facts) await toolJson(agent, "memory_create", { content, type: "fact", tags: ["ops"] });
      const older = await toolJson(agent, "memory_create", { content: "The on-call engineer this week is Dana", type: "fact" });
      const newer = await toolJson(agent, "memory_create", { content: "The on-call engineer this week is Priya", type: "fact", validUntil: "2099-01-01" });
      expect(newer.results[0].shadowed).toEqual([expect.objectContaining({ memoryId: older.ids[0] })]);
      await server.app.indexer.drain();

      const lean = await toolJson(agent, "recall", { query: "which kubernetes version does the staging cluster run, and who is on call?", limit: 10 });
      expect(lean.memories).toHaveLength(10);
      expect(Object.keys(lean)).toEqual(["memories"]);
      for (const item of lean.memories) {
        expect(Object.keys(item).filter((k) => !["id", "type", "content", "validUntil", "supersedes"].includes(k)), JSON.stringify(item)).toEqual([]);
      }
      const onCall = lean.memories.find((m: { id: string }) => m.id === newer.ids[0]);
      expect(onCall).toEqual({
        id: newer.ids[0],
        type: "fact",
        content: "The on-call engineer this week is Priya",
        validUntil: expect.stringMatching(/^2099-01-01/),
        supersedes: [expect.objectContaining({ memoryId: older.ids[0] })],
      });
      expect(lean.memories.filter((m: { supersedes?: unknown }) => m.supersedes !== undefined)).toHaveLength(1);
      const textBytes = lean.memories.reduce((sum: number, m: { content: string }) => sum + Buffer.byteLength(m.content), 0);
      expect(Buffer.byteLength(JSON.stringify(lean))).toBeLessThanOrEqual(textBytes + 200 * lean.memories.length);

      const full = await toolJson(agent, "recall", { query: "who is on call?", limit: 10, includeReceipt: true });
      expect(full).toHaveProperty("receipt");
      expect(full.memories[0]).toHaveProperty("why");
      expect(full.memories[0]).toHaveProperty("similarity");
    } finally {
      await agent.close();
    }
  });

  it("creates, recalls, updates and deletes a memory through tools, with the REST answers", async () => {
    const created = await toolJson(client, "memory_create", { content: "The user deploys with Helm charts on Fridays", type: "fact", tags: ["ops"] });
    expect(created).toMatchObject({ ids: [expect.stringMatching(/^mem_/)], memories: [{ type: "fact", tags: ["ops"], version: 1, state: "active" }] });
    const id = created.ids[0] as string;

    await server.app.indexer.drain();
    const recalled = await toolJson(client, "recall", { query: "how does the user deploy?", searchMode: "keyword" });
    expect(recalled.memories.map((m: { id: string }) => m.id)).toContain(id);
    // Without receipts an item carries neither why nor supersedes (spec 2.2), as over REST.
    const bare = await toolJson(client, "recall", { query: "how does the user deploy?", searchMode: "keyword", includeReceipt: false });
    expect(bare.memories[0]).toMatchObject({ id });
    expect(bare.memories[0]).not.toHaveProperty("why");
    expect(bare.memories[0]).not.toHaveProperty("supersedes");

    const updated = await toolJson(client, "memory_update", { id, memory: { content: "The user deploys with Argo CD on Fridays" } });
    expect(updated).toMatchObject({ id, version: 2, content: "The user deploys with Argo CD on Fridays" });
    const versions = await toolJson(client, "memory_versions", { id });
    expect(versions.versions.map((v: { version: number }) => v.version)).toEqual([1, 2]);

    // The tool answers exactly what REST answers for the same call.
    const viaRest = await rest(server.url, key)("GET", `/api/v1/agent/memories/${id}`);
    const got = await toolJson(client, "memory_get", { id });
    expect(got).toEqual(viaRest.body);
    expect(got).not.toHaveProperty("contradictions");

    expect(await toolJson(client, "memory_delete", { id })).toEqual({ id, versionsDeleted: 2, restored: [] });
    const gone = await rest(server.url, key)("GET", `/api/v1/agent/memories/${id}`);
    expect(gone.status).toBe(404);
    await expectToolError(client, "memory_get", { id }, gone.body.error);
  });

  it("previews a create with dryRun: the receipt a create would answer, and nothing stored", async () => {
    const call = rest(server.url, key);
    const list = async () => (await call("GET", "/api/v1/agent/memories?pageSize=200")).body;
    const older = await toolJson(client, "memory_create", { content: "The user's standing desk is in room 4", type: "fact" });
    const olderId = older.ids[0] as string;
    const before = { list: await list(), stats: (await call("GET", "/api/v1/agent/stats")).body };

    const dry = await toolJson(client, "memory_create", { content: "The user's standing desk is in room 9", type: "fact", dryRun: true });
    expect(dry).toMatchObject({
      dryRun: true,
      results: [{ outcome: "stored", supersedes: [olderId], shadowed: [{ memoryId: olderId, rule: "number" }], summary: expect.stringMatching(/^stored; shadowed /) }],
      contradictions: [{ conflictsWith: olderId, rule: "number", shadowed: true }],
    });
    const again = await toolJson(client, "memory_create", { content: "The user's standing desk is in room 4", type: "fact", dryRun: true });
    expect(again).toMatchObject({ dryRun: true, results: [{ outcome: "duplicate", duplicateOf: olderId, summary: `duplicate of ${olderId}` }] });

    expect({ list: await list(), stats: (await call("GET", "/api/v1/agent/stats")).body }).toEqual(before);
    const missing = await call("GET", `/api/v1/agent/memories/${dry.ids[0]}`);
    expect(missing.status).toBe(404);
    await expectToolError(client, "memory_get", { id: dry.ids[0] }, missing.body.error);
    expect((await toolJson(client, "memory_get", { id: olderId })).state).toBe("active");
  });

  it("passes only the key to the handlers: a client's configured headers apply to every message", async () => {
    const withHeader = await connectHttp(server.url, key, { "idempotency-key": "configured-once" });
    try {
      const first = await toolJson(withHeader, "memory_create", { content: "The build uses Bazel", type: "fact" });
      const second = await toolJson(withHeader, "memory_create", { content: "The tests use pytest", type: "fact" });
      expect(second.ids[0]).not.toBe(first.ids[0]);
    } finally {
      await withHeader.close();
    }
  });

  it("answers errors as tool results with the REST code, message and details", async () => {
    const call = rest(server.url, key);
    const invalid = await call("POST", "/api/v1/agent/memories", { content: "x", type: "opinion" });
    expect(invalid.status).toBe(400);
    await expectToolError(client, "memory_create", { content: "x", type: "opinion" }, invalid.body.error);

    const unknown = await call("POST", "/api/v1/agent/recall", { query: "x", nonsense: 1 });
    await expectToolError(client, "recall", { query: "x", nonsense: 1 }, unknown.body.error);
    expect(unknown.body.error).toMatchObject({ code: "invalid_request", details: { field: "nonsense", rule: "unknown_field" } });

    // Unknown tool names are a protocol error, not a tool result.
    await expect(client.callTool({ name: "memory_explode", arguments: {} })).rejects.toThrow(/unknown tool memory_explode/);
  });

  it("answers a tools/call whose arguments are not an object as invalid params naming the field", async () => {
    const callWith = async (params: unknown) => {
      const res = await fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { id: number; error: { code: number; message: string; data: { error: { details: unknown } } } };
    };
    // Agents send a tool's input as a string of JSON: the SDK's own answer was an internal error.
    const stringArguments = await callWith({ name: "recall", arguments: JSON.stringify({ query: "x" }) });
    expect(stringArguments).toMatchObject({ id: 7, error: { code: -32602, message: expect.stringMatching(/^params\.arguments: must be a JSON object/) } });
    expect(stringArguments.error.data.error.details).toEqual({ field: "params.arguments", rule: "type" });
    expect((await callWith({ arguments: {} })).error.data.error.details).toEqual({ field: "params.name", rule: "type" });
    expect((await callWith("recall")).error.data.error.details).toEqual({ field: "params", rule: "type" });
  });

  it("answers MARKETPLACE_DISABLED from marketplace tools while the flag is off, as REST", async () => {
    for (const method of marketplaceTools) {
      const route = restRouteOf(method)!;
      const viaRest = await rest(server.url, key)(route.verb.toUpperCase(), route.path, {});
      expect(viaRest.status).toBe(403);
      expect(viaRest.body.error.code).toBe("MARKETPLACE_DISABLED");
      await expectToolError(client, mcpToolName(method)!, {}, viaRest.body.error);
      await expectToolError(client, mcpToolName(method)!, { id: "skl_x", nonsense: true }, viaRest.body.error);
    }
  });

  it("keeps tenants apart: another workspace's ids are not_found, as over REST", async () => {
    const created = await toolJson(client, "memory_create", { content: "Acme's staging database is pg-stage-2", type: "fact" });
    const id = created.ids[0] as string;
    const skill = await toolJson(client, "skill_create", {
      name: "acme-secrets",
      description: "Where Acme keeps its secrets.",
      content: "# Secrets\n\nAsk the vault.",
    });

    const foreign = rest(server.url, otherTenantKey);
    const memory = await foreign("GET", `/api/v1/agent/memories/${id}`);
    expect(memory.body.error.code).toBe("not_found");
    await expectToolError(otherTenant, "memory_get", { id }, memory.body.error);
    await expectToolError(otherTenant, "memory_delete", { id }, (await foreign("DELETE", `/api/v1/agent/memories/${id}`)).body.error);
    const update = await foreign("PATCH", `/api/v1/agent/memories/${id}`, { content: "pwned" });
    await expectToolError(otherTenant, "memory_update", { id, memory: { content: "pwned" } }, update.body.error);

    const skillGet = await foreign("POST", "/api/v1/agent/skills/get", { id: skill.skill.id });
    expect(skillGet.body.error.code).toBe("not_found");
    await expectToolError(otherTenant, "skill_get", { id: skill.skill.id }, skillGet.body.error);
    await expect(otherTenant.readResource({ uri: "skill://acme-secrets" })).rejects.toMatchObject({ code: -32002 });
    const prompts = await otherTenant.listPrompts();
    expect(prompts.prompts.map((p) => p.name)).not.toContain("acme-secrets");
  });

  it("round-trips a skill: create, get, list, search, update, export, import", async () => {
    const created = await toolJson(client, "skill_create", {
      name: "Deploy Checklist",
      description: "Walks through a production deployment: migrations, feature flags, canary and rollback plan.",
      content: "# Deploy\n\n1. Run migrations.\n2. Flip flags.\n",
      tags: ["ops"],
    });
    expect(created.skill).toMatchObject({ slug: "deploy-checklist", version: 1, maturity: "experimental", visibility: "private" });

    expect((await toolJson(client, "skill_get", { slug: "deploy-checklist" })).skill.id).toBe(created.skill.id);
    const listed = await toolJson(client, "skill_list", { tags: ["ops"] });
    expect(listed.skills.map((s: { slug: string }) => s.slug)).toEqual(["deploy-checklist"]);
    const found = await toolJson(client, "skill_search", { query: "ship a release to production safely", tags: ["ops"] });
    expect(found.skills[0]).toMatchObject({ slug: "deploy-checklist", similarity: expect.any(Number) });

    const updated = await toolJson(client, "skill_update", { slug: "deploy-checklist", expectedVersion: 1, maturity: "beta" });
    expect(updated.skill).toMatchObject({ version: 2, maturity: "beta" });
    await expectToolError(
      client,
      "skill_update",
      { slug: "deploy-checklist", expectedVersion: 1, maturity: "stable" },
      (await rest(server.url, key)("POST", "/api/v1/agent/skills/update", { slug: "deploy-checklist", expectedVersion: 1, maturity: "stable" })).body.error,
    );

    const imported = await toolJson(client, "skill_import", { content: skillMd });
    expect(imported).toMatchObject({ created: true, skill: { slug: "release-notes", license: "MIT", source: "imported" } });
    const exported = await toolJson(client, "skill_export", { slug: "release-notes" });
    expect(exported).toMatchObject({ filename: "SKILL.md", files: [] });
    expect(exported.content).toContain("Group the merged pull requests by area");
    const again = await toolJson(client, "skill_import", { content: exported.content });
    expect(again).toMatchObject({ created: false, skill: { slug: "release-notes", version: 2 } });
  });

  it("lists the caller's skills as resources and prompts, and reads one as its SKILL.md", async () => {
    await toolJson(client, "skill_create", {
      name: "pdf-forms",
      description: "Fills PDF forms from a JSON description of the fields.",
      content: "# PDF forms\n\nRead the form's fields first.",
    });
    const exported = await toolJson(client, "skill_export", { slug: "pdf-forms" });

    const { resources } = await client.listResources();
    expect(resources).toContainEqual({
      uri: "skill://pdf-forms",
      name: "pdf-forms",
      title: "pdf-forms",
      description: "Fills PDF forms from a JSON description of the fields.",
      mimeType: "text/markdown",
    });
    const read = await client.readResource({ uri: "skill://pdf-forms" });
    expect(read.contents).toEqual([{ uri: "skill://pdf-forms", mimeType: "text/markdown", text: exported.content }]);
    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual(["skill://{slug}"]);
    await expect(client.readResource({ uri: "skill://no-such-skill" })).rejects.toMatchObject({
      code: -32002,
      data: { error: { code: "not_found" } },
    });
    await expect(client.readResource({ uri: "file:///etc/passwd" })).rejects.toMatchObject({
      code: -32602,
      data: { error: { code: "invalid_request", details: { field: "uri", rule: "format" } } },
    });

    const { prompts } = await client.listPrompts();
    expect(prompts).toContainEqual({ name: "pdf-forms", title: "pdf-forms", description: "Fills PDF forms from a JSON description of the fields." });
    const prompt = await client.getPrompt({ name: "pdf-forms" });
    expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: exported.content } }]);
    await expect(client.getPrompt({ name: "no-such-skill" })).rejects.toMatchObject({ code: -32602 });
  });

  /** A new workspace on a plan of test/usage/limits-env.ts, with a container key. */
  async function keyOnPlan(plan: string): Promise<string> {
    const workspace = `ws-${plan}-${Math.random().toString(36).slice(2, 8)}`;
    const planKey = await server.createKey(workspace, "agent-1");
    expect((await rest(server.url, adminKey)("PUT", `/api/v1/admin/workspaces/${workspace}/plan`, { plan })).status).toBe(200);
    return planKey;
  }

  it("charges tool calls to the plan's quotas, as REST calls", async () => {
    const smallKey = await keyOnPlan("small");
    const small = await connectHttp(server.url, smallKey);
    try {
      const facts = ["a", "b", "c", "d", "e"].map((content) => ({ content, type: "fact" }));
      expect((await toolJson(small, "memory_create", { memories: facts })).ids).toHaveLength(5);
      const overRest = await rest(server.url, smallKey)("POST", "/api/v1/agent/memories", { content: "f", type: "fact" });
      expect(overRest.status).toBe(429);
      const overTool = (await small.callTool({ name: "memory_create", arguments: { content: "f", type: "fact" } })) as CallToolResult;
      expect(overTool.isError).toBe(true);
      const { error } = JSON.parse((overTool.content[0] as { text: string }).text);
      // retryAfter counts seconds to the monthly reset, so the two calls may be a second apart.
      expect(error).toEqual({ ...overRest.body.error, details: { ...overRest.body.error.details, retryAfter: expect.any(String) } });
      expect(error).toMatchObject({ code: "quota_exhausted", details: { limit: "memoriesStored", plan: "small" } });
      expect((await toolJson(small, "stats", {})).remaining).toMatchObject({ memoriesStored: 0 });
    } finally {
      await small.close();
    }
  });

  it("counts every MCP request against the key's rate limits and refuses with 429 before MCP", async () => {
    const tightKey = await keyOnPlan("tight");
    const call = (id: number) =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${tightKey}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "stats", arguments: {} } }),
      });
    // The tight plan's sustained bucket holds 8 requests and refills one per 64 s.
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let id = 1; id <= 12 && !refused; id++) {
      const res = await call(id);
      statuses.push(res.status);
      if (res.status === 429) refused = res;
      else await res.text();
    }
    expect(refused, `statuses ${statuses.join(", ")}`).toBeDefined();
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(9);
    expect(refused!.headers.get("retry-after")).not.toBeNull();
    expect(refused!.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(await refused!.json()).toMatchObject({ error: { code: "rate_limited" } });
  });

  it("refuses a wrong key with 401 before any MCP message is read", async () => {
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
    };
    const post = (authorization: string | undefined, body: unknown) =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: {
          ...(authorization ? { authorization } : {}),
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify(body),
      });

    for (const authorization of ["Bearer amk_not_a_key", undefined]) {
      const res = await post(authorization, initialize);
      expect(res.status).toBe(401);
      expect(res.headers.get("x-ratelimit-limit")).not.toBeNull();
      expect(await res.json()).toMatchObject({ error: { code: "auth_failed" } });
    }
    const err = await connectHttp(server.url, "amk_not_a_key").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(401);

    // The key before the body: a malformed message from a stranger is 401, not a verdict on the message.
    const strangerBadBody = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { authorization: "Bearer amk_not_a_key", "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{",
    });
    expect(strangerBadBody.status).toBe(401);

    const admin = await post(`Bearer ${adminKey}`, initialize);
    expect(admin.status).toBe(403);
    expect(await admin.json()).toMatchObject({ error: { code: "forbidden" } });

    const ok = await post(`Bearer ${key}`, initialize);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-ratelimit-remaining")).not.toBeNull();
    expect(await ok.json()).toMatchObject({ id: 1, result: { serverInfo: { name: "agentmem" }, capabilities: { tools: {}, resources: {}, prompts: {} } } });

    const compressed = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-encoding": "gzip" },
      body: JSON.stringify(initialize),
    });
    expect(compressed.status).toBe(400);
    expect(await compressed.json()).toMatchObject({ error: { details: { field: "content-encoding", rule: "content_encoding" } } });

    const batch = await post(`Bearer ${key}`, [initialize, { ...initialize, id: 2 }]);
    expect(batch.status).toBe(400);
    expect(await batch.json()).toMatchObject({ error: { code: "invalid_request", details: { field: "body", rule: "batch" } } });

    const stream = await fetch(`${server.url}/mcp`, { headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" } });
    expect(stream.status).toBe(405);
    expect(stream.headers.get("allow")).toBe("POST");
  });
});
