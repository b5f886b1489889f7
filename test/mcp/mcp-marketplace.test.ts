import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminKey, backends, rest, startTestServer, type TestServer } from "../support/test-server.js";
import { connectHttp, expectToolError, toolJson } from "./mcp-client.js";

// The marketplace through MCP tools with the flag on: skill_appeal keeps the rules and errors of
// marketplace/appeal, and the other marketplace tools answer as their REST routes do.

describe.each(backends)("marketplace tools over MCP (%s)", (backend) => {
  let server: TestServer;
  let author: Client;
  let reader: Client;
  let authorRest: ReturnType<typeof rest>;

  beforeAll(async () => {
    server = await startTestServer(backend, { MARKETPLACE_ENABLED: "true" });
    const authorKey = await server.createKey("mcp-author");
    author = await connectHttp(server.url, authorKey);
    reader = await connectHttp(server.url, await server.createKey("mcp-reader"));
    authorRest = rest(server.url, authorKey);
  });
  afterAll(async () => {
    await author?.close();
    await reader?.close();
    await server?.close();
  });

  it("search, get, install and fork a published skill; skill_appeal on a removed one, again, and on one not removed", async () => {
    const skill = await toolJson(author, "skill_create", {
      name: "invoice-tables",
      description: "Extracts tables from PDF invoices into CSV. Use when a PDF holds tabular data.",
      content: "# Invoice tables\n\n1. Open the PDF.\n2. Find the tables.\n",
      license: "MIT",
    });
    const id = skill.skill.id as string;
    expect((await authorRest("POST", "/api/v1/agent/skills/publish-public", { id })).status).toBe(200);

    const found = await toolJson(reader, "marketplace_search", { query: "pull the tables out of a scanned invoice" });
    expect(found.skills[0]).toMatchObject({ id, slug: "invoice-tables" });
    expect((await toolJson(reader, "marketplace_get", { id })).skill).toMatchObject({ id, version: 1 });
    const copy = (await toolJson(reader, "marketplace_install", { id })).skill;
    expect(copy).toMatchObject({ source: "installed", installedFrom: { id, version: 1 } });
    // Versions, upgrade and yank are tools too.
    expect((await authorRest("POST", "/api/v1/agent/skills/update", { id, content: "# Invoice tables\n\n1. Open the PDF.\n" })).status).toBe(200);
    expect((await toolJson(reader, "marketplace_versions", { id })).versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(await toolJson(reader, "skill_upgrade", { id: copy.id, dryRun: true })).toMatchObject({ applied: false, to: { version: 2 } });
    expect((await toolJson(author, "skill_yank", { id, version: 2, reason: "Drops a step." })).yank).toMatchObject({ reason: "Drops a step." });
    expect((await toolJson(reader, "marketplace_fork", { id, slug: "invoice-tables-fork" })).skill).toMatchObject({
      slug: "invoice-tables-fork",
      forkOf: id,
    });

    // Not removed: APPEAL_CONFLICT, exactly as over REST.
    const notRemoved = await authorRest("POST", "/api/v1/agent/marketplace/appeal", { id, message: "Why?" });
    expect(notRemoved.status).toBe(409);
    expect(notRemoved.body.error.code).toBe("APPEAL_CONFLICT");
    await expectToolError(author, "skill_appeal", { id, message: "Why?" }, notRemoved.body.error);

    const takedown = await rest(server.url, adminKey)("POST", `/api/v1/admin/marketplace/skills/${id}/takedown`, { reason: "spam" });
    expect(takedown.status).toBe(200);
    const appeal = await toolJson(author, "skill_appeal", { id, message: "This is not spam; it is our own tool." });
    expect(appeal.appeal).toMatchObject({ skillId: id, status: "pending" });

    const again = await authorRest("POST", "/api/v1/agent/marketplace/appeal", { id, message: "Please look again." });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: "APPEAL_CONFLICT", details: { pendingAppealId: appeal.appeal.id } });
    await expectToolError(author, "skill_appeal", { id, message: "Please look again." }, again.body.error);

    // Someone else's removed skill is not_found through the tools too.
    await expectToolError(reader, "marketplace_get", { id }, (await rest(server.url, await server.createKey("mcp-reader-2"))("POST", "/api/v1/agent/marketplace/get", { id })).body.error);
  });
});
