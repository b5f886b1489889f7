/** The MCP endpoint (Streamable HTTP), on the same port as the REST API. */
export const mcpPath = "/mcp";

/**
 * URLs of the HTTP API: REST under /api/ and the MCP endpoint. Their requests are admitted against
 * the key's rate limits and their bodies guarded before routing; health and metrics are not.
 */
export function isHttpApiUrl(url: string): boolean {
  return url.startsWith("/api/") || url === mcpPath || url.startsWith(`${mcpPath}?`);
}
