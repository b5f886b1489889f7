import { getOption, hasOption, ScalarType, type AnyDesc, type DescEnum, type DescField, type DescFile, type DescMessage } from "@bufbuild/protobuf";
import { isWrapperDesc } from "@bufbuild/protobuf/wkt";
import { batch } from "../../gen/agent/v1/json_options_pb.js";
import { field_behavior, FieldBehavior } from "../../gen/google/api/field_behavior_pb.js";
import { restEnumName, restEnumValues } from "../transport/rest/enum-names.js";

// The one mapping from message descriptors to JSON Schema (the REST JSON of a message: JSON names,
// REST enum names). protoc-gen-openapi uses it for the OpenAPI components, the MCP tool definitions
// for their input and output schemas. What a request must hold comes from the protos:
// - a field with (google.api.field_behavior) = REQUIRED is in its object's `required` list;
// - a singular message field next to a google.protobuf.FieldMask is a partial update (AIP-134): its
//   message is inlined there without `required`, since an update gives only the fields it changes;
// - a request with an (agent.v1.batch) list takes that list or one item at the top level: `oneOf`
//   the list, or the REQUIRED fields; in the one-item form (`singleItem`, the MCP tools') it takes
//   one item only, its REQUIRED fields at the top level, and a top-level field without a comment of
//   its own is described by the batch item's field of the same name.

export type Json = Record<string, unknown>;
export type Documented = Exclude<AnyDesc, DescFile>;

export interface SchemaOptions {
  /** Where the schemas of referenced messages live, e.g. "#/components/schemas/" or "#/$defs/". */
  refPrefix: string;
  /** A descriptor's documentation. Proto comments exist at build time only, so run-time callers pass none. */
  describe?: (desc: Documented) => string | undefined;
  /** Requests with a batch list take one item only (see above). */
  singleItem?: boolean;
}

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

export function isInlined(message: DescMessage): boolean {
  return isWrapperDesc(message) || message.typeName in wellKnownSchemas;
}

export const isRequired = (field: DescField): boolean =>
  hasOption(field, field_behavior) && getOption(field, field_behavior).includes(FieldBehavior.REQUIRED);

const isBatch = (field: DescField): boolean => hasOption(field, batch) && getOption(field, batch);

const isFieldMask = (field: DescField): boolean => field.message?.typeName === "google.protobuf.FieldMask";

/** A singular message field of a request with an update mask: the partial resource of an update (AIP-134). */
export const isPartialUpdate = (field: DescField): boolean =>
  field.fieldKind === "message" && !isFieldMask(field) && !isInlined(field.message) && field.parent.fields.some(isFieldMask);

/** The messages these fields refer to by name: a partial update's message is inlined, so its fields' messages instead. */
export function referencedMessages(fields: readonly DescField[]): DescMessage[] {
  return fields.flatMap((f) => (!f.message || isInlined(f.message) ? [] : isPartialUpdate(f) ? referencedMessages(f.message.fields) : [f.message]));
}

export function scalarSchema(type: ScalarType): Json {
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

/** The messages reachable from the roots through their fields (roots included) that are referred to by name. */
export function reachableMessages(roots: DescMessage[], singleItem = false): Set<DescMessage> {
  const seen = new Set<DescMessage>();
  const visit = (message: DescMessage): void => {
    if (seen.has(message) || isInlined(message)) return;
    seen.add(message);
    referencedMessages(singleItem ? message.fields.filter((f) => !isBatch(f)) : message.fields).forEach(visit);
  };
  roots.forEach(visit);
  return seen;
}

export interface MessageSchemas {
  /** A reference to a message's schema, or its inlined schema for well-known types. */
  messageSchema(message: DescMessage): Json;
  fieldSchema(field: DescField): Json;
  /** A message (or some of its fields) as an object schema that refers to other messages; `partial` requires nothing. */
  objectSchema(message: DescMessage, fields?: readonly DescField[], partial?: boolean): Json;
}

export function messageSchemas(opts: SchemaOptions): MessageSchemas {
  const withDescription = (schema: Json, desc: Documented): Json => {
    const description = opts.describe?.(desc) ?? (desc.kind === "field" ? batchItemComment(desc) : undefined);
    return description === undefined ? schema : { ...schema, description };
  };
  // A one-item field of a batch request without a comment: the batch item's field of the same name says it.
  const batchItemComment = (field: DescField): string | undefined => {
    const item = field.parent.fields.find(isBatch)?.message?.fields.find((f) => f.jsonName === field.jsonName);
    return item && opts.describe?.(item);
  };
  const enumSchema = (desc: DescEnum): Json => {
    const schema = withDescription({ type: "string", enum: restEnumValues(desc) }, desc);
    const values = enumValueDescriptions(desc);
    return values === undefined ? schema : { ...schema, description: [schema.description, values].filter(Boolean).join("\n") };
  };
  // Each documented value, one line each, under its REST name: so a model can choose between them.
  const enumValueDescriptions = (desc: DescEnum): string | undefined => {
    const lines = desc.values
      .filter((v) => v.number !== 0)
      .flatMap((v) => {
        const text = opts.describe?.(v);
        return text === undefined ? [] : [`- \`${restEnumName(desc, v.name)}\`: ${text}`];
      });
    return lines.length > 0 ? lines.join("\n") : undefined;
  };
  const messageSchema = (message: DescMessage): Json => {
    if (isWrapperDesc(message)) return scalarSchema(message.fields[0].scalar);
    return wellKnownSchemas[message.typeName] ?? { $ref: `${opts.refPrefix}${message.name}` };
  };
  // The schema of one value of a field: the field itself, a list's element or a map's value.
  const valueSchema = (field: DescField): Json => {
    if (field.message) return messageSchema(field.message);
    if (field.enum) return enumSchema(field.enum);
    return scalarSchema(field.scalar);
  };
  // A field's schema without its description.
  const typeSchema = (field: DescField): Json => {
    if (isPartialUpdate(field)) return objectSchema(field.message!, field.message!.fields, true);
    const value = valueSchema(field);
    if (field.fieldKind === "list") return { type: "array", items: value };
    // Map keys are always strings in JSON, whatever their proto type.
    if (field.fieldKind === "map") return { type: "object", additionalProperties: value };
    return value;
  };
  const fieldSchema = (field: DescField): Json => withDescription(typeSchema(field), field);
  const properties = (fields: readonly DescField[], describe: boolean): Json =>
    Object.fromEntries(fields.map((field) => [field.jsonName, describe ? fieldSchema(field) : typeSchema(field)]));
  // `required`, or for a request taking a batch or one item, the two ways to call it.
  const requirements = (fields: readonly DescField[]): Json => {
    const required = fields.filter(isRequired);
    const batchField = fields.find(isBatch);
    if (batchField && !opts.singleItem) {
      const way = (given: DescField[]): Json => ({ type: "object", properties: properties(given, false), required: given.map((f) => f.jsonName) });
      return { oneOf: [way([batchField]), way(required)] };
    }
    return required.length > 0 ? { required: required.map((f) => f.jsonName) } : {};
  };
  // The one-item form leaves the batch list out.
  const fieldsOf = (message: DescMessage): readonly DescField[] => (opts.singleItem ? message.fields.filter((f) => !isBatch(f)) : message.fields);
  const objectSchema = (message: DescMessage, fields: readonly DescField[] = fieldsOf(message), partial = false): Json =>
    withDescription(
      {
        type: "object",
        properties: properties(fields, true),
        ...(partial ? {} : requirements(fields)),
        additionalProperties: false,
      },
      message,
    );
  return { messageSchema, fieldSchema, objectSchema };
}

/** The object schemas of the given messages by message name; two messages of one name would collide. */
export function namedSchemas(schemas: MessageSchemas, messages: Iterable<DescMessage>): Record<string, Json> {
  const named: Record<string, Json> = {};
  for (const message of messages) {
    if (message.name in named) throw new Error(`two schemas named ${message.name}`);
    named[message.name] = schemas.objectSchema(message);
  }
  return named;
}

/**
 * A self-contained JSON Schema of one message: its object schema, with the schemas of the messages
 * it refers to under $defs (JSON Schema 2020-12), as MCP tool input and output schemas must be.
 */
export function standaloneSchema(message: DescMessage, opts: Omit<SchemaOptions, "refPrefix"> = {}): Json {
  const schemas = messageSchemas({ refPrefix: "#/$defs/", ...opts });
  const reachable = [...reachableMessages([message], opts.singleItem)];
  // The message itself is in $defs only when a field refers back to it.
  const recursive = reachable.some((m) => m.fields.some((f) => f.message === message));
  const referenced = recursive ? reachable : reachable.slice(1);
  const schema = schemas.objectSchema(message);
  return referenced.length === 0 ? schema : { ...schema, $defs: namedSchemas(schemas, referenced) };
}
