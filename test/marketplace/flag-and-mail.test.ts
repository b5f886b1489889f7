import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MarketplaceService } from "../../gen/agent/v1/marketplace_pb.js";
import { SkillService } from "../../gen/agent/v1/skill_pb.js";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { startSmtpServer, type TestSmtpServer } from "../support/smtp.js";
import { adminKey, backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

const skill = {
  name: "log-digest",
  description: "Summarises yesterday's error logs into a short digest for the on-call engineer.",
  content: "# Digest\n",
};

describe("with the marketplace off (the default)", () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer("pglite");
    key = await server.createKey("acme");
  });
  afterAll(() => server?.close());

  const marketplaceRoutes = ["search", "get", "install", "fork", "report", "appeal", "terms"];

  it("answers 403 MARKETPLACE_DISABLED on every marketplace route, publish-public and unpublish, over REST", async () => {
    const call = rest(server.url, key);
    const { id } = (await call("POST", "/api/v1/agent/skills", skill)).body.skill;
    const paths = [...marketplaceRoutes.map((r) => `/api/v1/agent/marketplace/${r}`), "/api/v1/agent/skills/publish-public", "/api/v1/agent/skills/unpublish"];
    for (const path of paths) {
      const res = await call("POST", path, path.endsWith("terms") || path.endsWith("search") ? {} : { id });
      expect(res.status, path).toBe(403);
      expect(res.body.error.code, path).toBe("MARKETPLACE_DISABLED");
    }
    // Before the body is validated: an id of the wrong shape, an unknown field, a body of the wrong type.
    for (const path of marketplaceRoutes.map((r) => `/api/v1/agent/marketplace/${r}`)) {
      for (const body of [{ id: "skl_x" }, { nonsense: true }, ["not", "an", "object"]]) {
        const res = await call("POST", path, body);
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(403);
        expect(res.body.error.code, path).toBe("MARKETPLACE_DISABLED");
      }
    }
    // A wrong key is still told so first.
    const wrongKey = await rest(server.url, "am_wrong")("POST", "/api/v1/agent/marketplace/search", { nonsense: true });
    expect(wrongKey.status).toBe(401);
    // The skill stays private; the rest of the skills API works.
    expect((await call("POST", "/api/v1/agent/skills/get", { id })).body.skill.visibility).toBe("private");
  });

  it("answers the same over Connect and gRPC", async () => {
    const headers = { authorization: `Bearer ${key}` };
    for (const transport of [createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }), createGrpcTransport({ baseUrl: server.url })]) {
      const market = createClient(MarketplaceService, transport);
      const skills = createClient(SkillService, transport);
      for (const call of [
        market.searchMarketplace({ query: "logs" }, { headers }),
        market.getMarketplaceTerms({}, { headers }),
        market.installSkill({ id: "skl_x" }, { headers }),
        skills.publishSkill({ slug: "log-digest" }, { headers }),
        skills.unpublishSkill({ slug: "log-digest" }, { headers }),
      ]) {
        const err = ConnectError.from(await call.then(() => undefined, (e: unknown) => e));
        expect(err.code).toBe(Code.PermissionDenied);
        expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("MARKETPLACE_DISABLED");
      }
    }
    // Connect JSON with fields the request message does not have: refused before it is decoded.
    for (const method of MarketplaceService.methods) {
      const res = await fetch(`${server.url}/${MarketplaceService.typeName}/${method.name}`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ id: "skl_x", nonsense: true }),
      });
      expect(res.status, method.name).toBe(403);
      expect(((await res.json()) as { code: string }).code, method.name).toBe("permission_denied");
    }
  });
});

/** Publishes a skill of a new workspace with an email on file and takes it down; returns the takedown answer. */
async function takeDown(server: TestServer, workspace: string) {
  const admin = rest(server.url, adminKey);
  await admin("PUT", `/api/v1/admin/workspaces/${workspace}/profile`, { email: `${workspace}@example.com` });
  const author = rest(server.url, await server.createKey(workspace));
  const { id } = (await author("POST", "/api/v1/agent/skills", skill)).body.skill;
  await author("POST", "/api/v1/agent/skills/publish-public", { id });
  const takedown = await admin("POST", `/api/v1/admin/marketplace/skills/${id}/takedown`, { reason: "spam" });
  return { takedown, admin };
}

/** Polls the outbox until the email satisfies `done` (the sender works in the background). */
async function emailWhen(admin: ReturnType<typeof rest>, id: string, done: (e: { status: string; attempts: number }) => boolean) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const email = (await admin("GET", "/api/v1/admin/emails")).body.emails.find((e: { id: string }) => e.id === id);
    if (email && done(email)) return email;
    if (Date.now() > deadline) throw new Error(`email ${id} never reached the expected state: ${JSON.stringify(email)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe.each(backends)("author emails when the mail server refuses (%s)", (backend) => {
  let server: TestServer;
  let smtp: TestSmtpServer;

  beforeAll(async () => {
    smtp = await startSmtpServer({ refuse: true });
    server = await startTestServer(backend, { MARKETPLACE_ENABLED: "true", SMTP_URL: smtp.url, EMAIL_MAX_ATTEMPTS: "3", EMAIL_RETRY_BASE_MS: "20" });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it("never fails the takedown; the email is retried with backoff and then marked failed", async () => {
    const { takedown, admin } = await takeDown(server, "refused-ws");
    expect(takedown.status).toBe(200);
    expect(takedown.body.emailId).toMatch(/^eml_/);
    await smtp.attempted(3);
    const email = await emailWhen(admin, takedown.body.emailId, (e) => e.status !== "unsent");
    expect(email).toMatchObject({ status: "failed", attempts: 3, to: "refused-ws@example.com", kind: "takedown" });
    expect(email.lastError).toContain("550");
    expect(smtp.attempts()).toBe(3);
    expect(smtp.received).toEqual([]);
    expect((await admin("GET", "/api/v1/admin/emails?status=failed")).body.emails.map((e: { id: string }) => e.id)).toEqual([takedown.body.emailId]);
  });
});

describe("author emails without SMTP_URL", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer("pglite", { MARKETPLACE_ENABLED: "true" });
  });
  afterAll(() => server?.close());

  it("keeps them unsent in the outbox, listed by the admin API", async () => {
    const { takedown, admin } = await takeDown(server, "no-smtp-ws");
    expect(takedown.status).toBe(200);
    const unsent = (await admin("GET", "/api/v1/admin/emails?status=unsent")).body.emails;
    expect(unsent).toEqual([
      expect.objectContaining({ id: takedown.body.emailId, status: "unsent", attempts: 0, to: "no-smtp-ws@example.com", subject: expect.stringContaining("removed") }),
    ]);
    expect(server.app.emails).toBeNull();
  });

  it("sets an author profile from the CLI", async () => {
    const env = { ...process.env, AGENTMEM_URL: server.url, AGENTMEM_ADMIN_KEY: adminKey };
    const cli = (...args: string[]) => promisify(execFile)(process.execPath, ["src/cli/agentmem.mjs", "workspaces", "profile", ...args], { env });
    const { stdout } = await cli("cli-ws", "--author-handle", "cli-author", "--email", "cli@example.com");
    expect(JSON.parse(stdout)).toEqual({ workspace: "cli-ws", authorHandle: "cli-author", email: "cli@example.com", verified: false });
    expect(JSON.parse((await cli("cli-ws", "--email", "", "--verified", "true")).stdout)).toEqual({ workspace: "cli-ws", authorHandle: "cli-author", verified: true });
  });
});
