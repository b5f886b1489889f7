import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, startTestServer, type TestServer } from "../support/test-server.js";
import { connectHttp, expectToolError, toolJson } from "./mcp-client.js";

const root = new URL("../..", import.meta.url).pathname;

/** `npx agentmem mcp` started by the SDK's stdio client, the way a desktop agent client starts it. */
async function connectStdio(env: Record<string, string>): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: "npx",
    args: ["agentmem", "mcp"],
    cwd: root,
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "agentmem-stdio-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

// The relay does not touch storage: one backend is enough here (the tools run on both in mcp-http.test.ts).
describe("agentmem mcp (stdio relay to /mcp)", () => {
  let server: TestServer;
  let key: string;
  let client: Client;

  beforeAll(async () => {
    server = await startTestServer("pglite");
    key = await server.createKey("acme", "agent-1");
    ({ client } = await connectStdio({ AGENTMEM_URL: server.url, AGENTMEM_API_KEY: key }));
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it("serves the HTTP server's own tools, resources and prompts", async () => {
    const overHttp = await connectHttp(server.url, key);
    try {
      expect((await client.listTools()).tools).toEqual((await overHttp.listTools()).tools);
      expect(client.getServerVersion()).toEqual(overHttp.getServerVersion());
      expect(client.getInstructions()).toEqual(overHttp.getInstructions());
    } finally {
      await overHttp.close();
    }
  });

  it("creates, reads and deletes a memory, and relays tool errors unchanged", async () => {
    const created = await toolJson(client, "memory_create", { content: "The user's laptop runs NixOS", type: "fact" });
    const id = created.ids[0] as string;
    expect(await toolJson(client, "memory_get", { id })).toEqual((await rest(server.url, key)("GET", `/api/v1/agent/memories/${id}`)).body);
    expect(await toolJson(client, "memory_delete", { id })).toMatchObject({ id, versionsDeleted: 1 });
    await expectToolError(client, "memory_get", { id }, (await rest(server.url, key)("GET", `/api/v1/agent/memories/${id}`)).body.error);
  });

  it("loads a skill as a resource and as a prompt", async () => {
    await toolJson(client, "skill_create", { name: "git-bisect", description: "Finds the commit that broke a test.", content: "# Bisect\n\nStart with git bisect start." });
    const { content } = await toolJson(client, "skill_export", { slug: "git-bisect" });
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain("skill://git-bisect");
    expect((await client.readResource({ uri: "skill://git-bisect" })).contents).toEqual([{ uri: "skill://git-bisect", mimeType: "text/markdown", text: content }]);
    expect((await client.getPrompt({ name: "git-bisect" })).messages).toEqual([{ role: "user", content: { type: "text", text: content } }]);
  });

  it("answers the server's 401 for a wrong key as the error of the request", async () => {
    const failed = await connectStdio({ AGENTMEM_URL: server.url, AGENTMEM_API_KEY: "amk_wrong" }).catch((err: unknown) => err);
    expect(failed).toMatchObject({ code: -32000, data: { status: 401, error: { code: "auth_failed" } } });
    expect((failed as Error).message).toContain("(auth_failed, HTTP 401)");
  });
});
