import type { DescMethod, JsonValue } from "@bufbuild/protobuf";
import { createContextValues, createHandlerContext } from "@connectrpc/connect";
import { mcpPath } from "../api-paths.js";
import { fromRestJson } from "../rest/rest-json.js";
import { boundHandler, callWithJson, type UnaryHandler } from "../rest/rest-call.js";
import type { ServiceBinding } from "../service-binding.js";

/** One RPC as the MCP server calls it: its descriptor and its bound (guarded) handler. */
export interface BoundRpc {
  method: DescMethod;
  handler: UnaryHandler;
  /** The service's refusal (ServiceBinding.refusal), asked before the arguments are read. */
  refusal: ServiceBinding["refusal"];
}

/** Finds an RPC by its full name (agent.v1.MemoryService/CreateMemories) among the bindings. */
export function bindRpc(bindings: ServiceBinding[], rpc: string): BoundRpc {
  const [serviceName, methodName] = rpc.split("/");
  const binding = bindings.find((b) => b.service.typeName === serviceName);
  const method = binding?.service.methods.find((m) => m.name === methodName);
  if (!binding || !method) throw new Error(`${rpc} is not served (gen/mcp-tools.json is stale? run npm run generate)`);
  return { method, handler: boundHandler(binding, method), refusal: binding.refusal };
}

/**
 * Calls an RPC with REST JSON arguments and the MCP request's HTTP headers (the Bearer key) through
 * its bound handler, as the REST routes do: the key is authenticated and scoped, quotas are charged,
 * and errors are the REST errors. Rate limits were applied to the HTTP request already
 * (rate-limit-hook.ts).
 */
export async function callRpc(rpc: BoundRpc, args: JsonValue, requestHeader: Headers): Promise<JsonValue> {
  const { method } = rpc;
  const refused = rpc.refusal();
  if (refused) throw refused;
  const json = fromRestJson(method.input, args, "");
  const ctx = createHandlerContext({
    service: method.parent,
    method,
    protocolName: "mcp",
    requestMethod: "POST",
    url: mcpPath,
    requestHeader,
    contextValues: createContextValues(),
  });
  return callWithJson(rpc.handler, method, json, ctx);
}
