// protoc-gen-openapi: writes openapi.json, an OpenAPI 3.1 description of the REST API,
// from the google.api.http rules of the RPCs, and mcp-tools.json, the MCP server's tool
// definitions, from the (agent.v1.mcp_tool) options. Run by `buf generate` (see buf.gen.yaml).
// Required fields come from (google.api.field_behavior) (json-schema.ts), each operation's error
// responses from the common codes and the RPC's (agent.v1.errors) options.
// Non-ES output, so this uses the plain Plugin interface rather than createEcmaScriptPlugin.
import { create, createFileRegistry, getOption, hasOption } from "@bufbuild/protobuf";
import type { DescField, DescMessage, DescMethod, DescService } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { CodeGeneratorResponse_Feature, CodeGeneratorResponseSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { getComments, runNodeJs, type Plugin } from "@bufbuild/protoplugin";
import { errors } from "../../gen/agent/v1/errors_pb.js";
import { errorCodes, type ErrorCode } from "../errors/codes.js";
import { isJsonQueryField, restRouteOf, type RestRoute } from "../transport/rest/rest-route.js";
import { mcpToolDefinitions, rpcName, type McpToolDefinition } from "../transport/mcp/tool-definitions.js";
import { messageSchemas, namedSchemas, reachableMessages, referencedMessages, type Documented, type Json } from "./json-schema.js";

interface Operation {
  path: string;
  method: string;
  operation: Json;
  /** Messages the operation refers to by $ref; they and their fields' messages become components. */
  messages: DescMessage[];
}

const errorResponseType = "agent.v1.ErrorResponse";

// Errors every operation can answer: a malformed request, a wrong key, a key of the wrong role or
// container, too many requests, a failure. An RPC adds the others it can return with (agent.v1.errors).
const commonErrors: ErrorCode[] = ["invalid_request", "auth_failed", "forbidden", "rate_limited", "server_error"];

const isErrorCode = (code: string): code is ErrorCode => code in errorCodes;

function operationErrors(method: DescMethod): ErrorCode[] {
  const own = hasOption(method, errors) ? getOption(method, errors) : [];
  for (const code of own) {
    if (!isErrorCode(code)) throw new Error(`${method.parent.typeName}.${method.name}: (agent.v1.errors) names ${code}, which is no error code`);
  }
  return [...commonErrors, ...(own as ErrorCode[])];
}

// Every API response carries the caller's rate-limit state (see README, Rate limits).
const rateLimitHeaders: Record<string, Json> = {
  "X-RateLimit-Limit": { description: "Requests the key can send at once from rest.", schema: { type: "integer" } },
  "X-RateLimit-Remaining": { description: "Requests the key can send at once now.", schema: { type: "integer" } },
  "X-RateLimit-Reset": { description: "Seconds until X-RateLimit-Remaining is back to X-RateLimit-Limit.", schema: { type: "integer" } },
};
const retryAfterHeader: Json = {
  description: "Seconds to wait: until a request is admitted (rate_limited) or until the monthly reset (quota_exhausted, cost_ceiling).",
  schema: { type: "integer" },
};
const headerRefs = (names: string[]): Json =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

// Operations the REST transport serves itself, with no RPC behind them.
const extraOperations: Operation[] = [
  {
    path: "/api/v1/agent/openapi.json",
    method: "get",
    operation: {
      operationId: "getOpenApi",
      summary: "Returns this OpenAPI document.",
      responses: { "200": okResponse({ type: "object" }), ...errorResponses(["auth_failed", "rate_limited", "server_error"]) },
    },
    messages: [],
  },
];

/** The leading proto comment, without the per-line indentation protoc keeps. */
function comment(desc: Documented): string | undefined {
  const text = getComments(desc).leading?.split("\n").map((line) => line.trim()).join("\n").trim();
  return text || undefined;
}

function withDescription(schema: Json, desc: Documented): Json {
  const description = comment(desc);
  return description === undefined ? schema : { ...schema, description };
}

function schemaRef(name: string): Json {
  return { $ref: `#/components/schemas/${name}` };
}

const schemas = messageSchemas({ refPrefix: "#/components/schemas/", describe: comment });
const { messageSchema, fieldSchema, objectSchema } = schemas;

function parameter(field: DescField, location: "path" | "query"): Json {
  const { description, ...schema } = fieldSchema(field);
  return {
    // JSON names, as in bodies (path templates name proto fields; the REST routes use JSON names too).
    name: field.jsonName,
    in: location,
    ...(description === undefined ? {} : { description }),
    ...(location === "path" ? { required: true } : {}),
    // A Struct travels as the text of a JSON object; a list repeats its parameter.
    ...(isJsonQueryField(field) ? { content: { "application/json": { schema } } } : { schema }),
  };
}

function okResponse(schema: Json): Json {
  return { description: "OK", headers: headerRefs(Object.keys(rateLimitHeaders)), content: { "application/json": { schema } } };
}

/** One response per HTTP status of the given codes, describing those codes. */
function errorResponses(codes: ErrorCode[]): Json {
  const statuses = [...new Set(codes.map((code) => errorCodes[code].http))].sort((a, b) => a - b);
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      {
        description: (Object.keys(errorCodes) as ErrorCode[])
          .filter((code) => codes.includes(code) && errorCodes[code].http === status)
          .map((code) => `- \`${code}\`: ${errorCodes[code].summary}`)
          .join("\n"),
        headers: headerRefs([...Object.keys(rateLimitHeaders), ...(status === 429 || status === 402 ? ["Retry-After"] : [])]),
        content: { "application/json": { schema: schemaRef("ErrorResponse") } },
      },
    ]),
  );
}

function restOperation(route: RestRoute): Operation {
  const { method } = route;
  const service = method.parent;
  const parameters = [
    ...route.pathFields.map((f) => parameter(f, "path")),
    ...route.queryFields.map((f) => parameter(f, "query")),
  ];
  // A request with nothing left for the body (e.g. RotateKey) has no body at all.
  const body =
    route.body === "*"
      ? route.bodyFields.length > 0
        ? objectSchema(method.input, route.bodyFields)
        : undefined
      : route.body && fieldSchema(route.body);
  const description = comment(method);
  const summary = description?.match(/^[\s\S]*?\.(?=\s|$)/)?.[0].replace(/\s+/g, " ");
  const bodyMessages = referencedMessages(route.body === "*" ? route.bodyFields : route.body ? [route.body] : []);

  return {
    path: route.path,
    method: route.verb,
    operation: {
      operationId: `${service.name}_${method.name}`,
      tags: [service.name],
      ...(summary === undefined ? {} : { summary }),
      ...(description === undefined || description === summary ? {} : { description }),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(body ? { requestBody: { required: true, content: { "application/json": { schema: body } } } } : {}),
      responses: {
        "200": okResponse(messageSchema(method.output)),
        ...errorResponses(operationErrors(method)),
      },
    },
    messages: [method.output, ...bodyMessages],
  };
}

const jsonRpcMessage: Json = {
  type: "object",
  description: "One JSON-RPC 2.0 message of the Model Context Protocol (a request, a notification or a response).",
  required: ["jsonrpc"],
  properties: {
    jsonrpc: { const: "2.0" },
    id: { type: ["string", "integer"] },
    method: { type: "string" },
    params: { type: "object" },
    result: { type: "object" },
    error: { type: "object" },
  },
};

/**
 * The MCP endpoint as what it is over HTTP: one POST operation taking a JSON-RPC message. Its tools
 * are not REST operations, so they are not listed as paths; x-mcp-tools names each tool and the
 * REST operation whose RPC it calls.
 */
function mcpOperation(tools: McpToolDefinition[], services: DescService[]): Operation {
  const operationIds = new Map(services.flatMap((s) => s.methods).map((m) => [rpcName(m), `${m.parent.name}_${m.name}`]));
  return {
    path: "/mcp",
    method: "post",
    operation: {
      operationId: "mcp",
      tags: ["MCP"],
      summary: "Model Context Protocol server (Streamable HTTP transport, stateless).",
      description:
        "Send each JSON-RPC message of an MCP session as its own POST, with `Accept: application/json, " +
        "text/event-stream` and the same Bearer key as the REST API; answers are JSON (never an event " +
        "stream), and every other method answers 405 (no server-initiated messages, no sessions). A wrong key " +
        "is refused with 401 before any MCP message is read, and every POST counts as one request against " +
        "the key's rate limits. Tools run the RPCs of the REST operations named in x-mcp-tools, with the " +
        "request message as arguments and the response message as structured result; their errors are tool " +
        "results with isError and the REST error body as text. The caller's skills are resources " +
        "(skill://{slug}, the SKILL.md text) and prompts. JSON-RPC batches are refused (400).",
      externalDocs: { url: "https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#streamable-http" },
      requestBody: { required: true, content: { "application/json": { schema: jsonRpcMessage } } },
      responses: {
        "200": okResponse(jsonRpcMessage),
        "202": { description: "Accepted: the message was a notification or a response.", headers: headerRefs(Object.keys(rateLimitHeaders)) },
        ...errorResponses(commonErrors),
      },
      "x-mcp-tools": tools.map((tool) => ({ name: tool.name, operationId: operationIds.get(tool.rpc) })),
    },
    messages: [],
  };
}

function openApiDocument(services: DescService[], allMessages: DescMessage[], tools: McpToolDefinition[]): Json {
  const operations = services.flatMap((service) =>
    service.methods.flatMap((m) => restRouteOf(m) ?? []).map(restOperation),
  );
  const paths: Record<string, Json> = {};
  for (const op of [...operations, ...extraOperations, mcpOperation(tools, services)]) (paths[op.path] ??= {})[op.method] = op.operation;

  const errorResponse = allMessages.find((m) => m.typeName === errorResponseType);
  if (!errorResponse) throw new Error(`${errorResponseType} not found`);
  // ErrorResponse is a schema although no RPC returns it: the REST transport sends it on errors.
  const used = reachableMessages([...operations.flatMap((op) => op.messages), errorResponse]);
  const components = namedSchemas(schemas, allMessages.filter((m) => used.has(m)));
  // Error.code is a string on the wire (codes such as MARKETPLACE_DISABLED are not enum value names).
  const error = components.Error as { properties: { code: Json } };
  error.properties.code = { ...error.properties.code, enum: Object.keys(errorCodes) };

  return {
    openapi: "3.1.0",
    info: {
      title: "Agent Memory and Skills Service API",
      version: "1.0.0",
      description:
        "REST API of the agent memory and skills service. Every RPC of the agent.v1 protos is also " +
        "available over gRPC and Connect. Generated by src/codegen/protoc-gen-openapi.ts; do not edit.",
    },
    servers: [{ url: "/" }],
    security: [{ bearerAuth: [] }],
    tags: [
      // Services without REST routes (gRPC health and reflection) have no operations to tag.
      ...services
        .filter((service) => service.methods.some((m) => restRouteOf(m)))
        .map((service) => withDescription({ name: service.name }, service)),
      { name: "MCP", description: "The Model Context Protocol server: the agent RPCs as tools, skills as resources and prompts." },
    ],
    paths,
    components: {
      schemas: components,
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } },
      headers: { ...rateLimitHeaders, "Retry-After": retryAfterHeader },
    },
  };
}

const plugin: Plugin = {
  name: "protoc-gen-openapi",
  version: "v1.0.0",
  run(request) {
    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: request.protoFile }));
    const files = [...registry.files];
    const services = files
      .filter((file) => request.fileToGenerate.includes(file.proto.name))
      .flatMap((file) => file.services);
    const messages = files.flatMap((file) => [...nestedTypes(file)].filter((t) => t.kind === "message"));
    const tools = mcpToolDefinitions(services, comment);
    const document = openApiDocument(services, messages, tools);
    return create(CodeGeneratorResponseSchema, {
      // Our protos use proto3 `optional`; protoc and buf reject plugins that don't declare support.
      supportedFeatures: BigInt(CodeGeneratorResponse_Feature.PROTO3_OPTIONAL),
      file: [
        { name: "openapi.json", content: JSON.stringify(document, null, 2) + "\n" },
        { name: "mcp-tools.json", content: JSON.stringify(tools, null, 2) + "\n" },
      ],
    });
  },
};

runNodeJs(plugin);
