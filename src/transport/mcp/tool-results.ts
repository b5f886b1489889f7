import type { JsonValue } from "@bufbuild/protobuf";
import { ErrorCode, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describeError, type ErrorBody } from "../../errors/api-error.js";

// How answers and failures of the RPCs behind the MCP server reach MCP clients.

/** A tool's answer: the response message's REST JSON, as text for any client and as structured content. */
export function toolResult(json: JsonValue): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(json) }], structuredContent: json as Record<string, unknown> };
}

/**
 * A failed tool call as a tool result the agent can read and act on: the REST error body as text,
 * with the same code, message and details as REST. No structured content: clients check that
 * against the tool's output schema, which describes answers, not errors.
 */
export function toolError(error: ErrorBody): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify({ error }) }], isError: true };
}

/**
 * A failed resource or prompt request as a JSON-RPC error: not_found with the given code (the
 * protocol's "resource not found" or "invalid params"), invalid_request as invalid params, anything
 * else as an internal error; `data` carries the REST error body.
 */
export function protocolError(err: unknown, notFoundCode: number): JsonRpcError {
  const error = describeError(err);
  const code =
    error.code === "not_found" ? notFoundCode : error.code === "invalid_request" ? ErrorCode.InvalidParams : ErrorCode.InternalError;
  return new JsonRpcError(code, error.message, { error });
}

/**
 * What the SDK sends as a JSON-RPC error: its code, message and data. (The SDK's McpError would
 * prefix the message with "MCP error <code>:", and the client prefixes it again.)
 */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}
