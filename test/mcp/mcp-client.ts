import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";

/** The official SDK client on the server's /mcp endpoint with an API key. */
export async function connectHttp(baseUrl: string, key: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "agentmem-test", version: "1.0.0" });
  const requestInit = { headers: { authorization: `Bearer ${key}`, ...headers } };
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", baseUrl), { requestInit }));
  return client;
}

function textOf(result: CallToolResult): string {
  expect(result.content).toHaveLength(1);
  const [content] = result.content;
  if (content?.type !== "text") throw new Error(`expected text content, got ${JSON.stringify(content)}`);
  return content.text;
}

/**
 * Calls a tool that must succeed and returns its answer. The SDK client has checked the structured
 * content against the tool's output schema; the text content must be the same JSON.
 */
export async function toolJson(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, textOf(result)).toBeFalsy();
  expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  return result.structuredContent;
}

/** Calls a tool that must fail with exactly the given REST error body. */
export async function expectToolError(client: Client, name: string, args: Record<string, unknown>, restError: unknown): Promise<void> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  expect(JSON.parse(textOf(result))).toEqual({ error: restError });
}
