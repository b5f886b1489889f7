import type { DescField, JsonValue } from "@bufbuild/protobuf";
import { createContextValues, createHandlerContext } from "@connectrpc/connect";
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from "fastify";
import type { Authenticator } from "../../accounts/authenticator.js";
import { invalidRequest } from "../../errors/api-error.js";
import type { ServiceBinding } from "../service-binding.js";
import { findField, fromRestJson } from "./rest-json.js";
import { isJsonQueryField, restRouteOf, type RestRoute } from "./rest-route.js";
import { requestHeaders } from "../headers.js";
import { boundHandler, callWithJson } from "./rest-call.js";
import { logFieldsOf, requestLogKey } from "../../observability/request-log.js";

function scalarFromText(field: DescField, text: string, at: string): JsonValue {
  if (isJsonQueryField(field)) return jsonObjectFromText(text, at);
  if (field.fieldKind === "enum" || (field.fieldKind === "list" && field.listKind === "enum")) return text;
  const scalar = field.fieldKind === "scalar" || (field.fieldKind === "list" && field.listKind === "scalar") ? field.scalar : undefined;
  if (scalar === undefined) throw invalidRequest(at, "type", "cannot be given as a query parameter");
  switch (scalar) {
    case 8 /* bool */:
      if (text !== "true" && text !== "false") throw invalidRequest(at, "type", "must be true or false");
      return text === "true";
    case 9 /* string */:
    case 12 /* bytes */:
      return text;
    default: {
      const n = Number(text);
      if (text.trim() === "" || !Number.isFinite(n)) throw invalidRequest(at, "type", "must be a number");
      return n;
    }
  }
}

function jsonObjectFromText(text: string, at: string): JsonValue {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidRequest(at, "json", "must be a JSON object (URL-encoded)");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalidRequest(at, "type", "must be a JSON object");
  return value as JsonValue;
}

/** Builds the proto3 JSON of the request from path parameters, query string and body. */
function requestJson(route: RestRoute, req: FastifyRequest): Record<string, JsonValue> {
  const json: Record<string, JsonValue> =
    route.body === "*" ? fromRestJson(route.method.input, req.body ?? {}, "") : {};
  if (route.body !== undefined && route.body !== "*") {
    const bodyField = route.body;
    const body = fromRestJson(bodyField.message!, req.body ?? {}, "");
    json[bodyField.jsonName] = body;
    if (route.maskField) json[route.maskField.jsonName] = Object.keys(body).join(",");
  }
  const params = req.params as Record<string, string>;
  for (const field of route.pathFields) json[field.jsonName] = scalarFromText(field, params[field.jsonName]!, field.jsonName);
  const query: Record<string, JsonValue> = {};
  for (const [key, raw] of Object.entries(req.query as Record<string, string | string[]>)) {
    const field = findField(route.method.input, key);
    if (!field || !route.queryFields.includes(field)) {
      throw invalidRequest(key, "unknown_field", "is not a known query parameter");
    }
    const values = Array.isArray(raw) ? raw : [raw];
    query[field.jsonName] =
      field.fieldKind === "list" ? values.map((v) => scalarFromText(field, v, key)) : scalarFromText(field, values.at(-1)!, key);
  }
  // Enums in the query string use their REST names too (?status=open), as in bodies.
  return { ...json, ...fromRestJson(route.method.input, query, "") };
}

/**
 * Registers every annotated method of the bindings as a REST route (a Fastify plugin). A request's key,
 * then its service's refusal (a feature turned off), are checked before its body is read or its query
 * decoded: a caller without a valid key gets 401, not a verdict on its input, and costs no parsing. The
 * RPC authenticates again, from the cache.
 */
export async function restRoutes(app: FastifyInstance, opts: { bindings: ServiceBinding[]; auth: Authenticator }): Promise<void> {
  for (const binding of opts.bindings) {
    const { service } = binding;
    const admit = async (req: FastifyRequest) => {
      await opts.auth.authenticate(requestHeaders(req.raw.headers));
      const refused = binding.refusal();
      if (refused) throw refused;
    };
    for (const method of service.methods) {
      const route = restRouteOf(method);
      if (!route) continue;
      const handler = boundHandler(binding, method);
      app.route({
        method: route.verb.toUpperCase() as HTTPMethods,
        url: route.url,
        onRequest: admit,
        handler: async (req: FastifyRequest, reply: FastifyReply) => {
          const json = requestJson(route, req);
          const ctx = createHandlerContext({
            service,
            method,
            protocolName: "rest",
            requestMethod: req.method,
            url: req.url,
            requestHeader: requestHeaders(req.raw.headers),
            contextValues: createContextValues().set(requestLogKey, logFieldsOf(req)),
          });
          const output = await callWithJson(handler, method, json, ctx);
          ctx.responseHeader.forEach((value, name) => void reply.header(name, value));
          return reply.type("application/json").send(JSON.stringify(output));
        },
      });
    }
  }
}
