import { getOption, hasOption, type DescField, type DescMethod } from "@bufbuild/protobuf";
import { http } from "../../../gen/google/api/annotations_pb.js";

// How a method's google.api.http rule binds the request to a REST call. Used by the REST
// routes at run time and by protoc-gen-openapi at build time, so the two cannot disagree.

export interface RestRoute {
  verb: "get" | "put" | "post" | "delete" | "patch";
  /** The path in OpenAPI form, parameters by their JSON names, e.g. /api/v1/agent/recall/traces/{traceId}. */
  path: string;
  /** The same path in Fastify's form, e.g. /api/v1/agent/recall/traces/:traceId. */
  url: string;
  pathFields: DescField[];
  /** "*" for the request minus path fields, a field for that field's value, undefined for no body. */
  body: "*" | DescField | undefined;
  /** Fields of a body "*": every field not bound to the path. */
  bodyFields: DescField[];
  /**
   * Fields that may be given in the query string: scalars, enums and lists of them outside path and body
   * (a list repeats its parameter), and google.protobuf.Struct fields as one JSON object.
   */
  queryFields: DescField[];
  /** A FieldMask filled from the keys of the body (AIP-134), so REST callers need not send one. */
  maskField: DescField | undefined;
  method: DescMethod;
}

/** A google.protobuf.Struct field: given in a query string as the text of one JSON object. */
export const isJsonQueryField = (f: DescField): boolean => f.fieldKind === "message" && f.message.typeName === "google.protobuf.Struct";

function requestField(method: DescMethod, name: string): DescField {
  const field = method.input.fields.find((f) => f.name === name);
  if (!field) throw new Error(`${method.parent.typeName}.${method.name}: no field ${name} in ${method.input.typeName}`);
  return field;
}

/** The REST binding of a method, or undefined when it has no http rule. */
export function restRouteOf(method: DescMethod): RestRoute | undefined {
  if (!hasOption(method, http)) return undefined;
  const rule = getOption(method, http);
  const { pattern } = rule;
  if (pattern.case === undefined || pattern.case === "custom" || rule.additionalBindings.length || rule.responseBody) {
    throw new Error(`${method.parent.typeName}.${method.name}: only plain get/put/post/delete/patch rules are supported`);
  }
  const pathFields: DescField[] = [];
  // "{trace_id=pattern}" becomes "{traceId}": parameters match whole segments only, named as in JSON.
  const path = pattern.value.replace(/\{([^}=]+)(?:=[^}]*)?\}/g, (_, name: string) => {
    const field = requestField(method, name);
    pathFields.push(field);
    return `{${field.jsonName}}`;
  });
  const unbound = method.input.fields.filter((f) => !pathFields.includes(f));
  const body = rule.body === "*" ? "*" : rule.body ? requestField(method, rule.body) : undefined;
  const bodyFields = body === "*" ? unbound : [];
  const maskField =
    body !== "*" && body !== undefined ? unbound.find((f) => f.message?.typeName === "google.protobuf.FieldMask") : undefined;
  const queryFields =
    body === "*" ? [] : unbound.filter((f) => f !== body && f.fieldKind !== "map" && (f.message === undefined || isJsonQueryField(f)));
  return {
    verb: pattern.case,
    path,
    url: path.replace(/\{([^}]+)\}/g, ":$1"),
    pathFields,
    body,
    bodyFields,
    queryFields,
    maskField,
    method,
  };
}
