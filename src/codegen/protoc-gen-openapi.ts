// protoc-gen-openapi: writes openapi.json, an OpenAPI 3.1 description of the REST API,
// from the google.api.http rules of the RPCs. Run by `buf generate` (see buf.gen.yaml).
// Non-ES output, so this uses the plain Plugin interface rather than createEcmaScriptPlugin.
import { create, createFileRegistry, ScalarType } from "@bufbuild/protobuf";
import type { AnyDesc, DescEnum, DescField, DescFile, DescMessage, DescService } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import {
  CodeGeneratorResponse_Feature,
  CodeGeneratorResponseSchema,
  FileDescriptorSetSchema,
  isWrapperDesc,
} from "@bufbuild/protobuf/wkt";
import { getComments, runNodeJs, type Plugin } from "@bufbuild/protoplugin";
import { errorCodes } from "../errors/codes.js";
import { restEnumValues } from "../transport/rest/enum-names.js";
import { isJsonQueryField, restRouteOf, type RestRoute } from "../transport/rest/rest-route.js";

type Json = Record<string, unknown>;

interface Operation {
  path: string;
  method: string;
  operation: Json;
  /** Messages the operation refers to by $ref; they and their fields' messages become components. */
  messages: DescMessage[];
}

const errorResponseType = "agent.v1.ErrorResponse";
// Services whose calls count against a plan's cost ceiling (402 cost_ceiling).
const meteredServices = ["MemoryService", "RecallService"];

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
      responses: { "200": okResponse({ type: "object" }), ...errorResponses([401, 500]) },
    },
    messages: [],
  },
];

// Well-known types have their own proto3 JSON forms, so they are inlined rather than referenced.
const wellKnownSchemas: Record<string, Json> = {
  "google.protobuf.Struct": { type: "object" },
  "google.protobuf.Value": {},
  "google.protobuf.ListValue": { type: "array" },
  "google.protobuf.FieldMask": { type: "string" },
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Duration": { type: "string" },
  "google.protobuf.Empty": { type: "object", properties: {}, additionalProperties: false },
};

function isInlined(message: DescMessage): boolean {
  return isWrapperDesc(message) || message.typeName in wellKnownSchemas;
}

/** The leading proto comment, without the per-line indentation protoc keeps. */
function comment(desc: Exclude<AnyDesc, DescFile>): string | undefined {
  const text = getComments(desc).leading?.split("\n").map((line) => line.trim()).join("\n").trim();
  return text || undefined;
}

function withDescription(schema: Json, desc: Exclude<AnyDesc, DescFile>): Json {
  const description = comment(desc);
  return description === undefined ? schema : { ...schema, description };
}

function schemaRef(name: string): Json {
  return { $ref: `#/components/schemas/${name}` };
}

function scalarSchema(type: ScalarType): Json {
  switch (type) {
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64" };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return { type: "number" };
    case ScalarType.INT32:
    case ScalarType.UINT32:
    case ScalarType.SINT32:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return { type: "integer", format: "int32" };
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      // proto3 JSON writes 64-bit integers as strings (JavaScript numbers lose precision).
      return { type: "string", format: "int64" };
  }
}

function enumSchema(desc: DescEnum): Json {
  return withDescription({ type: "string", enum: restEnumValues(desc) }, desc);
}

function messageSchema(message: DescMessage): Json {
  if (isWrapperDesc(message)) return scalarSchema(message.fields[0].scalar);
  return wellKnownSchemas[message.typeName] ?? schemaRef(message.name);
}

/** The schema of one value of a field: the field itself, a list's element or a map's value. */
function valueSchema(field: DescField): Json {
  if (field.message) return messageSchema(field.message);
  if (field.enum) return enumSchema(field.enum);
  return scalarSchema(field.scalar);
}

function fieldSchema(field: DescField): Json {
  const value = valueSchema(field);
  if (field.fieldKind === "list") return withDescription({ type: "array", items: value }, field);
  // Map keys are always strings in JSON, whatever their proto type.
  if (field.fieldKind === "map") return withDescription({ type: "object", additionalProperties: value }, field);
  return withDescription(value, field);
}

function objectSchema(message: DescMessage, fields: readonly DescField[] = message.fields): Json {
  return withDescription(
    {
      type: "object",
      properties: Object.fromEntries(fields.map((field) => [field.jsonName, fieldSchema(field)])),
      additionalProperties: false,
    },
    message,
  );
}

function parameter(field: DescField, location: "path" | "query"): Json {
  const { description, ...schema } = fieldSchema(field);
  return {
    // Path templates name proto fields; query strings use JSON names, like bodies.
    name: location === "path" ? field.name : field.jsonName,
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

/** One response per HTTP status, describing the spec's error codes with that status. */
function errorResponses(statuses: number[]): Json {
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      {
        description: Object.entries(errorCodes)
          .filter(([, code]) => code.http === status)
          .map(([name, code]) => `- \`${name}\`: ${code.summary}`)
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
  const bodyMessages = (route.body === "*" ? route.bodyFields : route.body ? [route.body] : []).flatMap((f) => f.message ?? []);

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
        ...errorResponses(
          [400, 401, ...(meteredServices.includes(service.name) ? [402] : []), 403, ...(route.pathFields.length > 0 ? [404] : []), 429, 500],
        ),
      },
    },
    messages: [method.output, ...bodyMessages],
  };
}

/** The given messages and every message reachable through their fields, minus inlined types. */
function reachableMessages(roots: DescMessage[]): Set<DescMessage> {
  const seen = new Set<DescMessage>();
  const visit = (message: DescMessage): void => {
    if (seen.has(message) || isInlined(message)) return;
    seen.add(message);
    message.fields.forEach((f) => f.message && visit(f.message));
  };
  roots.forEach(visit);
  return seen;
}

function openApiDocument(services: DescService[], allMessages: DescMessage[]): Json {
  const operations = services.flatMap((service) =>
    service.methods.flatMap((m) => restRouteOf(m) ?? []).map(restOperation),
  );
  const paths: Record<string, Json> = {};
  for (const op of [...operations, ...extraOperations]) (paths[op.path] ??= {})[op.method] = op.operation;

  const errorResponse = allMessages.find((m) => m.typeName === errorResponseType);
  if (!errorResponse) throw new Error(`${errorResponseType} not found`);
  // ErrorResponse is a schema although no RPC returns it: the REST transport sends it on errors.
  const used = reachableMessages([...operations.flatMap((op) => op.messages), errorResponse]);
  const schemas: Record<string, Json> = {};
  for (const message of allMessages.filter((m) => used.has(m))) {
    if (message.name in schemas) throw new Error(`two schemas named ${message.name}`);
    schemas[message.name] = objectSchema(message);
  }

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
    tags: services.map((service) => withDescription({ name: service.name }, service)),
    paths,
    components: {
      schemas,
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
    const document = openApiDocument(services, messages);
    return create(CodeGeneratorResponseSchema, {
      // Our protos use proto3 `optional`; protoc and buf reject plugins that don't declare support.
      supportedFeatures: BigInt(CodeGeneratorResponse_Feature.PROTO3_OPTIONAL),
      file: [{ name: "openapi.json", content: JSON.stringify(document, null, 2) + "\n" }],
    });
  },
};

runNodeJs(plugin);
