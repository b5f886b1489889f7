import { readdirSync, readFileSync } from "node:fs";
import { errorCodes } from "../src/errors/codes.js";
import { getOption, hasOption } from "@bufbuild/protobuf";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { file_agent_v1_admin } from "../gen/agent/v1/admin_pb.js";
import { file_agent_v1_marketplace } from "../gen/agent/v1/marketplace_pb.js";
import { file_agent_v1_moderation } from "../gen/agent/v1/moderation_pb.js";
import { file_agent_v1_memory } from "../gen/agent/v1/memory_pb.js";
import { file_agent_v1_recall } from "../gen/agent/v1/recall_pb.js";
import { file_agent_v1_skill } from "../gen/agent/v1/skill_pb.js";
import { file_agent_v1_stats } from "../gen/agent/v1/stats_pb.js";
import { http } from "../gen/google/api/annotations_pb.js";

// Loosely typed view of the parts of the document the assertions look at.
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: Record<string, unknown>;
}
interface Operation {
  operationId: string;
  "x-mcp-tools"?: Array<{ name: string; operationId: string }>;
  parameters?: Parameter[];
  requestBody?: { content: { "application/json": { schema: Record<string, any> } } };
  responses: Record<string, { description?: string; content?: { "application/json": { schema: Record<string, unknown> } } }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, any> };
}

const raw: unknown = JSON.parse(readFileSync(new URL("../gen/openapi.json", import.meta.url), "utf8"));
const doc = raw as Document;
const nonRpcPaths = ["/api/v1/agent/openapi.json", "/mcp"];

function operation(path: string, method: string): Operation {
  const op = doc.paths[path]?.[method];
  if (!op) throw new Error(`no ${method.toUpperCase()} ${path}`);
  return op;
}

/** Every (service, method, verb, path) with a google.api.http rule, over every agent.v1 file. */
const rules = [file_agent_v1_admin, file_agent_v1_marketplace, file_agent_v1_memory, file_agent_v1_moderation, file_agent_v1_recall, file_agent_v1_skill, file_agent_v1_stats].flatMap((file) => file.services).flatMap((service) =>
  service.methods
    .filter((method) => hasOption(method, http))
    .map((method) => {
      const { pattern } = getOption(method, http);
      if (pattern.case === undefined || pattern.case === "custom") throw new Error(`unexpected rule on ${method.name}`);
      // Path parameters are named as in JSON: {trace_id} is {traceId}.
      const path = pattern.value.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
      return { operationId: `${service.name}_${method.name}`, verb: pattern.case, path };
    }),
);

describe("gen/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const result = await new Validator().validate(structuredClone(raw) as Record<string, unknown>);
    expect(result.errors, JSON.stringify(result.errors, null, 2)).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it("has an operation for every RPC with an http rule, and no others", () => {
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      expect(operation(rule.path, rule.verb).operationId).toBe(rule.operationId);
    }
    const documented = Object.entries(doc.paths)
      .filter(([path]) => !nonRpcPaths.includes(path))
      .flatMap(([path, item]) => Object.keys(item).map((verb) => `${verb} ${path}`));
    expect(documented.sort()).toEqual(rules.map((r) => `${r.verb} ${r.path}`).sort());
  });

  it("describes CreateMemories' body: a single memory or a batch", () => {
    const body = operation("/api/v1/agent/memories", "post").requestBody?.content["application/json"].schema;
    expect(body?.properties.content).toMatchObject({ type: "string" });
    expect(body?.properties.memories).toMatchObject({
      type: "array",
      items: { $ref: "#/components/schemas/MemoryInput" },
    });
    expect(body?.properties.type.enum).toEqual(["fact", "lesson", "directive", "preference", "contact", "bookmark"]);
  });

  it("describes ListMemories' metadata parameter as the text of a JSON object, and its lists as repeated parameters", () => {
    const parameters = operation("/api/v1/agent/memories", "get").parameters ?? [];
    expect(parameters.find((p) => p.name === "metadata")).toMatchObject({ in: "query", content: { "application/json": { schema: { type: "object" } } } });
    expect(parameters.find((p) => p.name === "types")).toMatchObject({ in: "query", schema: { type: "array" } });
  });

  it("takes UpdateMemory's mask from the body, not from a parameter, and requires no field of the body", () => {
    const op = operation("/api/v1/agent/memories/{id}", "patch");
    expect(op.parameters).toContainEqual(expect.objectContaining({ name: "id", in: "path", required: true }));
    expect(op.parameters?.map((p) => p.name)).not.toContain("updateMask");
    const body = op.requestBody?.content["application/json"].schema;
    // A partial update (AIP-134): MemoryInput's fields, none of them required.
    expect(Object.keys(body?.properties ?? {})).toEqual(Object.keys(doc.components.schemas.MemoryInput.properties));
    expect(body).not.toHaveProperty("required");
    expect(body).not.toHaveProperty("oneOf");
  });

  it("reads GetMemory's version from an optional integer query parameter", () => {
    const version = operation("/api/v1/agent/memories/{id}", "get").parameters?.find((p) => p.name === "version");
    expect(version).toMatchObject({ in: "query", schema: { type: "integer" } });
    expect(version?.required).not.toBe(true);
  });

  it("answers errors with ErrorResponse", () => {
    expect(doc.components.schemas.ErrorResponse).toBeDefined();
    const { responses } = operation("/api/v1/agent/memories/{id}", "get");
    for (const status of ["400", "401", "403", "404", "429", "500"]) {
      expect(responses[status]?.content?.["application/json"].schema).toEqual({
        $ref: "#/components/schemas/ErrorResponse",
      });
    }
  });
});

describe("gen/openapi.json skills", () => {
  it("lists every skill route as a POST with a JSON body", () => {
    for (const route of ["", "/get", "/search", "/list", "/update", "/deprecate", "/import", "/export", "/publish-public", "/unpublish"]) {
      expect(operation(`/api/v1/agent/skills${route}`, "post").requestBody?.content["application/json"].schema).toBeDefined();
    }
  });
});

describe("gen/openapi.json MCP endpoint", () => {
  it("lists POST /mcp with each tool and the REST operation whose RPC it calls", () => {
    const mcp = operation("/mcp", "post");
    expect(Object.keys(doc.paths["/mcp"]!)).toEqual(["post"]);
    expect(mcp.responses["401"]?.content?.["application/json"].schema).toEqual({ $ref: "#/components/schemas/ErrorResponse" });
    const operationIds = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId)));
    const tools = mcp["x-mcp-tools"] ?? [];
    expect(tools).toContainEqual({ name: "memory_create", operationId: "MemoryService_CreateMemories" });
    for (const tool of tools) expect(operationIds, tool.name).toContain(tool.operationId);
  });
});

describe("gen/openapi.json marketplace", () => {
  it("lists every marketplace route, the terms among them, as a POST with a JSON body, and the MARKETPLACE_DISABLED answer", () => {
    for (const route of ["search", "get", "install", "fork", "report", "appeal"]) {
      const op = operation(`/api/v1/agent/marketplace/${route}`, "post");
      expect(op.requestBody?.content["application/json"].schema, route).toBeDefined();
    }
    expect(operation("/api/v1/agent/marketplace/terms", "post").responses["200"]).toBeDefined();
    expect(JSON.stringify(operation("/api/v1/agent/marketplace/search", "post").responses["403"])).toContain("MARKETPLACE_DISABLED");
    expect(operation("/api/v1/admin/marketplace/reports", "get").parameters?.map((p) => p.name)).toContain("status");
  });
});

// The operations whose RPCs charge a plan's caps (src/usage/usage-meter.ts: reserveMemories,
// chargeUpdate, chargeRecall, reserveSkill, chargeReembedding): all can cross the cost ceiling (402);
// edits charge cost only, so they cannot run out of a stored-items or recall quota (429 quota_exhausted).
const charged = [
  "post /api/v1/agent/memories",
  "patch /api/v1/agent/memories/{id}",
  "post /api/v1/agent/recall",
  "post /api/v1/agent/skills",
  "post /api/v1/agent/skills/update",
  "post /api/v1/agent/skills/import",
  "post /api/v1/agent/marketplace/install",
  "post /api/v1/agent/marketplace/fork",
  "post /api/v1/agent/skills/upgrade",
];
const costOnly = ["patch /api/v1/agent/memories/{id}", "post /api/v1/agent/skills/update", "post /api/v1/agent/skills/upgrade"];
const marketplaceRoutes = (path: string) =>
  path.startsWith("/api/v1/agent/marketplace/") ||
  ["/api/v1/agent/skills/publish-public", "/api/v1/agent/skills/unpublish", "/api/v1/agent/skills/yank", "/api/v1/agent/skills/upgrade"].includes(path);
const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([verb, op]) => ({ name: `${verb} ${path}`, path, op })));
const codesOf = (op: Operation) =>
  Object.values(op.responses).flatMap((r) => [...(r.description ?? "").matchAll(/^- `(\w+)`/gm)].map((m) => m[1]!));

describe("gen/openapi.json requirements", () => {
  it("requires what the protos mark REQUIRED: a memory's content and type, a recall's query, a skill's name, description and content", () => {
    expect(doc.components.schemas.MemoryInput.required).toEqual(["content", "type"]);
    const body = (path: string) => operation(path, "post").requestBody?.content["application/json"].schema;
    expect(body("/api/v1/agent/recall")?.required).toEqual(["query"]);
    expect(body("/api/v1/agent/skills")?.required).toEqual(["name", "description", "content"]);
    expect(body("/api/v1/agent/skills/search")?.required).toEqual(["query"]);
    expect(body("/api/v1/agent/marketplace/appeal")?.required).toEqual(["id", "message"]);
    expect(doc.components.schemas.SkillFile.required).toEqual(["path"]);
  });

  it("describes CreateMemories as a batch or one memory with its content and type", () => {
    const body = operation("/api/v1/agent/memories", "post").requestBody?.content["application/json"].schema;
    expect(body).not.toHaveProperty("required");
    expect(body?.oneOf).toEqual([
      { type: "object", properties: { memories: { type: "array", items: { $ref: "#/components/schemas/MemoryInput" } } }, required: ["memories"] },
      { type: "object", properties: { content: { type: "string" }, type: expect.objectContaining({ type: "string" }) }, required: ["content", "type"] },
    ]);
  });

  it("gives the MCP tools the same required lists", () => {
    const tools = JSON.parse(readFileSync(new URL("../gen/mcp-tools.json", import.meta.url), "utf8")) as Array<{ name: string; inputSchema: Record<string, any> }>;
    const input = (name: string) => tools.find((t) => t.name === name)!.inputSchema;
    expect(input("recall").required).toEqual(["query"]);
    expect(input("skill_create").required).toEqual(["name", "description", "content"]);
    // A tool takes one memory: its required fields at the top level, where every client looks.
    expect(input("memory_create").required).toEqual(["content", "type"]);
    expect(input("memory_create")).not.toHaveProperty("oneOf");
    expect(input("memory_create").properties).not.toHaveProperty("memories");
    expect(input("memory_get").required).toEqual(["id"]);
    // An update's memory is partial: nothing in it is required.
    expect(input("memory_update").required).toEqual(["id", "memory"]);
    expect(input("memory_update").properties.memory).not.toHaveProperty("required");
    expect(input("memory_update").$defs).toBeUndefined();
  });
});

describe("gen/openapi.json errors", () => {
  it("gives Error.code the enum of every error code, each listed in errors.proto", () => {
    expect(doc.components.schemas.Error.properties.code.enum).toEqual(Object.keys(errorCodes));
    const proto = readFileSync(new URL("../proto/agent/v1/errors.proto", import.meta.url), "utf8");
    for (const code of Object.keys(errorCodes)) expect(proto, code).toMatch(new RegExp(`//.*\\b${code}\\b`));
  });

  it("lists 429 on every operation and the common codes on every RPC", () => {
    for (const { name, op } of operations) {
      expect(codesOf(op), name).toContain("rate_limited");
      if (name !== "get /api/v1/agent/openapi.json") expect(codesOf(op), name).toEqual(expect.arrayContaining(["invalid_request", "auth_failed", "forbidden", "server_error"]));
    }
  });

  it("lists 402 and quota_exhausted only where quotas are charged", () => {
    const with402 = operations.filter(({ op }) => "402" in op.responses).map((o) => o.name);
    expect(with402.sort()).toEqual([...charged].sort());
    for (const { name, op } of operations) expect(codesOf(op).includes("quota_exhausted"), name).toBe(charged.includes(name) && !costOnly.includes(name));
    expect(operation("/api/v1/agent/memories/{id}", "get").responses).not.toHaveProperty("402");
  });

  it("lists MARKETPLACE_DISABLED only on marketplace routes, and on each of them", () => {
    for (const { name, path, op } of operations) expect(codesOf(op).includes("MARKETPLACE_DISABLED"), name).toBe(marketplaceRoutes(path));
  });

  it("lists not_found where an id is looked up, not on listings", () => {
    expect(codesOf(operation("/api/v1/agent/memories/{id}", "get"))).toContain("not_found");
    expect(codesOf(operation("/api/v1/agent/recall/traces/{traceId}", "get"))).toContain("not_found");
    expect(codesOf(operation("/api/v1/agent/skills/get", "post"))).toContain("not_found");
    for (const path of ["/api/v1/agent/memories", "/api/v1/agent/recall/traces", "/api/v1/agent/stats"]) {
      expect(operation(path, "get").responses, path).not.toHaveProperty("404");
    }
    expect(operation("/api/v1/agent/recall", "post").responses).not.toHaveProperty("404");
  });
});

describe("gen/openapi.json and the API reference (docs/reference/api/)", () => {
  const apiDocs = new URL("../docs/reference/api/", import.meta.url);
  const reference = readdirSync(apiDocs)
    .filter((name) => name.endsWith(".md"))
    .map((name) => readFileSync(new URL(name, apiDocs), "utf8"))
    .join("\n");

  it("names path parameters as the reference spells them", () => {
    const documented = new Set(Object.keys(doc.paths));
    const inReadme = [...reference.matchAll(/`(?:GET|POST|PUT|PATCH|DELETE) (\/api\/v1\/[^`?\s]*\{[^`?\s]*)/g)].map((m) => m[1]!);
    expect(inReadme.length).toBeGreaterThan(5);
    for (const path of inReadme) expect(documented, path).toContain(path);
    expect(documented).toContain("/api/v1/agent/recall/traces/{traceId}");
  });

  it("has every field a memory carries in the reference's field list and in the Memory schema", () => {
    const fieldList = reference.slice(reference.indexOf("\nFields: `content`"), reference.indexOf("Default confidence by source"));
    for (const name of Object.keys(doc.components.schemas.Memory.properties)) expect(fieldList, name).toContain(`\`${name}\``);
    expect(doc.components.schemas.Memory.properties.severity).toMatchObject({ enum: ["low", "medium", "high", "critical"] });
    expect(doc.components.schemas.MemoryInput.properties.severity).toMatchObject({ enum: ["low", "medium", "high", "critical"] });
  });
});
