import { create, toJson, type DescMethod, type JsonValue } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { decodeJsonValue } from "../decode-errors.js";
import type { ServiceBinding } from "../service-binding.js";
import { toRestJson } from "./rest-json.js";

export type UnaryHandler = (req: unknown, ctx: HandlerContext) => Promise<unknown>;

/** The bound (guarded) handler of one method of a binding. */
export function boundHandler(binding: ServiceBinding, method: DescMethod): UnaryHandler {
  const handler = (binding.impl as Record<string, UnaryHandler | undefined>)[method.localName];
  if (!handler) throw new Error(`${binding.service.typeName} has no handler for ${method.name}`);
  return handler;
}

/**
 * Runs a bound handler on a request given as proto3 JSON (REST enum names already rewritten) and
 * answers its response as REST JSON: the one call path of REST routes and MCP tools.
 */
export async function callWithJson(handler: UnaryHandler, method: DescMethod, json: JsonValue, ctx: HandlerContext): Promise<JsonValue> {
  const input = decodeJsonValue(method.input, json);
  const output = create(method.output, (await handler(input, ctx)) as never);
  return toRestJson(method.output, toJson(method.output, output, { alwaysEmitImplicit: true }));
}
