import type { JsonValue } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";
import type { FastifyBaseLogger } from "fastify";
import { describeError, invalidRequest } from "../../errors/api-error.js";
import { noteError, type RequestLogFields } from "../../observability/request-log.js";
import type { ServiceBinding } from "../service-binding.js";
import { bindRpc, callRpc, type BoundRpc } from "./rpc-caller.js";
import {
  getSkillPrompt,
  listSkillPrompts,
  listSkillResources,
  readSkillResource,
  skillResourceTemplates,
  skillRpcs,
  type SkillRpcs,
} from "./skill-resources.js";
import { leanAnswers, type LeanAnswer } from "./lean-answers.js";
import type { McpToolDefinition } from "./tool-definitions.js";
import { JsonRpcError, protocolError, toolError, toolResult } from "./tool-results.js";

const instructions =
  "agentmem stores memories and skills for the API key's workspace and containers. " +
  "Call recall with a natural-language query before a task to get relevant memories; store what should " +
  "be remembered with memory_create. Skills are listed as resources (skill://<slug>, the SKILL.md) and " +
  "prompts; find the right one for a task with skill_search. Failed calls answer the REST API's error " +
  "body ({\"error\": {\"code\", \"message\", \"details\"}}).";

/** What every MCP request's server is built from; resolved once, at start. */
export interface McpServerParts {
  /** The server's name and version as MCP reports them: the package's. */
  serverInfo: { name: string; version: string };
  tools: Tool[];
  rpcs: Map<string, BoundRpc>;
  skills: SkillRpcs;
  validator: jsonSchemaValidator;
  log: FastifyBaseLogger;
}

export function mcpServerParts(
  bindings: ServiceBinding[],
  definitions: McpToolDefinition[],
  validator: jsonSchemaValidator,
  log: FastifyBaseLogger,
  version: string,
): McpServerParts {
  return {
    serverInfo: { name: "agentmem", version },
    tools: definitions.map(({ rpc: _rpc, ...tool }) => tool as Tool),
    rpcs: new Map(definitions.map((d) => [d.name, bindRpc(bindings, d.rpc)])),
    skills: skillRpcs(bindings),
    validator,
    log,
  };
}

async function callTool(
  parts: McpServerParts,
  rpc: BoundRpc,
  lean: LeanAnswer | undefined,
  args: Record<string, JsonValue>,
  headers: Headers,
  logFields: RequestLogFields,
): Promise<CallToolResult> {
  try {
    if (!lean) return toolResult(await callRpc(rpc, args, headers));
    return toolResult(lean.answer(args, await callRpc(rpc, lean.request(args), headers)));
  } catch (err) {
    noteError(logFields, err);
    // Handlers' failures are ConnectErrors already (bindService logs the unexpected ones); log the rest.
    if (!(err instanceof ConnectError)) parts.log.error({ err, tool: rpc.method.name }, "unexpected MCP tool failure");
    return toolError(describeError(err));
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Why a tools/call message cannot be called, as invalid params in the error model; undefined for any
 * other message. The SDK answers params its schema refuses as an internal error with that schema's
 * report, and agents often send a tool's arguments as a string of JSON: they are told so instead.
 */
export function invalidToolCall(message: unknown): JsonRpcError | undefined {
  if (!isObject(message) || message.method !== "tools/call") return undefined;
  const params = message.params;
  const problem = !isObject(params)
    ? invalidRequest("params", "type", "must be an object with the tool's name and arguments")
    : typeof params.name !== "string"
      ? invalidRequest("params.name", "type", "must be the tool's name (a string)")
      : params.arguments !== undefined && !isObject(params.arguments)
        ? invalidRequest("params.arguments", "type", "must be a JSON object of the tool's input, not a string or an array")
        : undefined;
  return problem && protocolError(problem, ErrorCode.InvalidParams);
}

/**
 * An MCP server for one HTTP request (the stateless Streamable HTTP transport takes a server per
 * request). Every call made through it carries the request's headers, so the bound handlers
 * authenticate and scope it exactly as they do a REST request with the same key. A failed tool call
 * answers HTTP 200 with an error result; its code goes to the request's log line (logFields).
 */
export function mcpServer(parts: McpServerParts, headers: Headers, logFields: RequestLogFields): Server {
  const server = new Server(
    parts.serverInfo,
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, prompts: { listChanged: false } },
      instructions,
      jsonSchemaValidator: parts.validator,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: parts.tools }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const rpc = parts.rpcs.get(request.params.name);
    if (!rpc) throw new JsonRpcError(ErrorCode.InvalidParams, `unknown tool ${request.params.name}`, undefined);
    const { name, arguments: args = {} } = request.params;
    return callTool(parts, rpc, leanAnswers.get(name), args as Record<string, JsonValue>, headers, logFields);
  });
  server.setRequestHandler(ListResourcesRequestSchema, (request) => listSkillResources(parts.skills, headers, request.params?.cursor));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => skillResourceTemplates());
  server.setRequestHandler(ReadResourceRequestSchema, (request) => readSkillResource(parts.skills, headers, request.params.uri));
  server.setRequestHandler(ListPromptsRequestSchema, (request) => listSkillPrompts(parts.skills, headers, request.params?.cursor));
  server.setRequestHandler(GetPromptRequestSchema, (request) => getSkillPrompt(parts.skills, headers, request.params.name));
  return server;
}
