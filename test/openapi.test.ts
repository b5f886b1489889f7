import { readFileSync } from "node:fs";
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
  responses: Record<string, { content?: { "application/json": { schema: Record<string, unknown> } } }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
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
      return { operationId: `${service.name}_${method.name}`, verb: pattern.case, path: pattern.value };
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

  it("takes UpdateMemory's mask from the body, not from a parameter", () => {
    const op = operation("/api/v1/agent/memories/{id}", "patch");
    expect(op.parameters).toContainEqual(expect.objectContaining({ name: "id", in: "path", required: true }));
    expect(op.parameters?.map((p) => p.name)).not.toContain("updateMask");
    expect(op.requestBody?.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/MemoryInput" });
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
