import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Authenticator } from "../../accounts/authenticator.js";
import { apiError, invalidRequest } from "../../errors/api-error.js";
import { logFieldsOf, noteCaller } from "../../observability/request-log.js";
import { mcpPath } from "../api-paths.js";
import { requestHeaders } from "../headers.js";
import type { ServiceBinding } from "../service-binding.js";
import { invalidToolCall, mcpServer, mcpServerParts } from "./mcp-server.js";
import type { McpToolDefinition } from "./tool-definitions.js";

export interface McpRoutesOptions {
  bindings: ServiceBinding[];
  /** gen/mcp-tools.json. */
  tools: McpToolDefinition[];
  auth: Authenticator;
  /** The package's version, which the MCP server reports. */
  version: string;
}

// The headers the MCP transport looks at; the others (the key among them) stay out of its Request.
const transportHeaders = ["accept", "content-type", "mcp-protocol-version"];

/**
 * The MCP server at /mcp (Streamable HTTP, stateless, JSON answers). Before any MCP message is
 * read, the request is admitted against the key's rate limits (rate-limit-hook.ts) and its key
 * authenticated (a wrong key is 401 auth_failed in the REST error model, as on /api/), then its body
 * parsed within the body limit and deadline. Each POST is one JSON-RPC message; batches would let one
 * admitted request run many calls, so they are refused.
 */
export async function mcpRoutes(app: FastifyInstance, opts: McpRoutesOptions): Promise<void> {
  const parts = mcpServerParts(opts.bindings, opts.tools, new AjvJsonSchemaValidator(), app.log, opts.version);

  const authorize = async (req: FastifyRequest) => {
    const principal = await opts.auth.authenticate(requestHeaders(req.headers));
    noteCaller(logFieldsOf(req), principal);
    if (principal.role !== "agent") throw apiError("forbidden", "admin keys cannot use the MCP server: use an agent key");
  };

  app.post(mcpPath, { onRequest: authorize }, async (req: FastifyRequest, reply: FastifyReply) => {
    if (Array.isArray(req.body)) throw invalidRequest("body", "batch", "must be one JSON-RPC message: batches are not accepted");
    const invalidCall = invalidToolCall(req.body);
    if (invalidCall) {
      const { code, message, data } = invalidCall;
      return reply.send({ jsonrpc: "2.0", id: (req.body as { id?: unknown }).id ?? null, error: { code, message, data } });
    }

    // Handlers see the key only: MCP clients send the same configured headers with every message, so
    // an Idempotency-Key among them would make every later memory_create replay the first one.
    const server = mcpServer(parts, new Headers({ authorization: req.headers.authorization! }), logFieldsOf(req));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const forwarded = new Headers();
      for (const name of transportHeaders) {
        const value = req.headers[name];
        if (value !== undefined) forwarded.set(name, Array.isArray(value) ? value.join(", ") : value);
      }
      const response = await transport.handleRequest(new Request(`http://localhost${mcpPath}`, { method: "POST", headers: forwarded }), {
        parsedBody: req.body,
      });
      reply.code(response.status);
      response.headers.forEach((value, name) => void reply.header(name, value));
      return reply.send(await response.text());
    } finally {
      await server.close();
    }
  });

  // No server-initiated stream (GET) and no sessions to end (DELETE): the transport's spec answers 405,
  // as for every other method but POST.
  const notAllowed = async (req: FastifyRequest, reply: FastifyReply) => {
    await opts.auth.authenticate(requestHeaders(req.headers));
    return reply
      .code(405)
      .header("allow", "POST")
      .send({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: send MCP messages with POST" }, id: null });
  };
  app.route({ method: ["GET", "DELETE", "PUT", "PATCH", "OPTIONS"], url: mcpPath, handler: notAllowed });
}
