import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { isJSONRPCRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { serverUrl } from "./server.js";

// `agentmem mcp`: the MCP server over stdio, for desktop agent clients that start servers as commands.
// It relays every message to the server's /mcp endpoint at AGENTMEM_URL with AGENTMEM_API_KEY, so
// the tools, resources and prompts are the server's own: one definition, served over HTTP, relayed here.

// JSON-RPC's range for implementation-defined server errors; data carries the HTTP status and REST error.
const relayFailure = -32000;

interface RestErrorBody {
  error?: { code?: string; message?: string };
}

/** A JSON-RPC error for a request the server refused before MCP (401, 403, 429...) or never got. */
function refusal(id: string | number, message: string, data: Record<string, unknown>): JSONRPCMessage {
  return { jsonrpc: "2.0", id, error: { code: relayFailure, message, data } };
}

function refusalMessage(status: number, text: string): { message: string; data: Record<string, unknown> } {
  let body: RestErrorBody | undefined;
  try {
    body = JSON.parse(text) as RestErrorBody;
  } catch {
    body = undefined;
  }
  const error = body?.error;
  return error?.code
    ? { message: `${error.message ?? error.code} (${error.code}, HTTP ${status})`, data: { status, error } }
    : { message: `the server answered HTTP ${status}`, data: { status } };
}

export function mcpRelay(baseUrl: string, apiKey: string) {
  const endpoint = `${baseUrl.replace(/\/+$/, "")}/mcp`;
  let protocolVersion: string | undefined;

  /** Posts one message to /mcp; answers what the client should receive (nothing for notifications). */
  return async function relay(message: JSONRPCMessage): Promise<JSONRPCMessage[]> {
    const id = isJSONRPCRequest(message) ? message.id : undefined;
    let res: Response;
    try {
      res = await fetch(endpoint, {
        method: "POST",
        headers: {
          authorization: `Bearer ${apiKey}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(protocolVersion ? { "mcp-protocol-version": protocolVersion } : {}),
        },
        body: JSON.stringify(message),
      });
    } catch (err) {
      // fetch's own message is "fetch failed"; its cause says why (ECONNREFUSED, a DNS failure...).
      const cause = err instanceof Error ? err.cause : undefined;
      const reason = cause instanceof Error ? cause.message : err instanceof Error ? err.message : String(err);
      return id === undefined ? [] : [refusal(id, `cannot reach ${endpoint}: ${reason}`, {})];
    }
    const text = await res.text();
    if (!res.ok) {
      if (id === undefined) return [];
      const { message: why, data } = refusalMessage(res.status, text);
      return [refusal(id, why, data)];
    }
    if (res.status === 202 || text === "") return [];
    let answer: JSONRPCMessage;
    try {
      answer = JSON.parse(text) as JSONRPCMessage;
    } catch {
      return id === undefined ? [] : [refusal(id, `${endpoint} did not answer JSON`, { status: res.status })];
    }
    if (isJSONRPCRequest(message) && message.method === "initialize" && "result" in answer) {
      protocolVersion = (answer.result as { protocolVersion?: string }).protocolVersion;
    }
    return [answer];
  };
}

/** Relays stdin to the server until stdin ends and every relayed request has been answered. */
export async function mcpCommand(): Promise<number> {
  const apiKey = process.env.AGENTMEM_API_KEY;
  if (!apiKey) {
    console.error("AGENTMEM_API_KEY is not set: agentmem mcp needs an agent API key");
    return 2;
  }
  const relay = mcpRelay(serverUrl(), apiKey);
  const stdio = new StdioServerTransport();
  const pending = new Set<Promise<void>>();
  stdio.onmessage = (message) => {
    const done: Promise<void> = relay(message)
      .then((answers) => Promise.all(answers.map((answer) => stdio.send(answer))))
      .then(
        () => undefined,
        (err: unknown) => console.error(`agentmem mcp: ${err instanceof Error ? err.message : String(err)}`),
      )
      .finally(() => pending.delete(done));
    pending.add(done);
  };
  stdio.onerror = (err) => console.error(`agentmem mcp: ${err.message}`);
  const ended = new Promise<void>((resolve) => process.stdin.once("end", resolve).once("close", resolve));
  await stdio.start();
  await ended;
  await Promise.all(pending);
  await stdio.close();
  return 0;
}
