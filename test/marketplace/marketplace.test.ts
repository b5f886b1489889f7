import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MarketplaceService, ReportReason } from "../../gen/agent/v1/marketplace_pb.js";
import { ModerationService } from "../../gen/agent/v1/moderation_pb.js";
import { ListingState, SkillService, SkillSource } from "../../gen/agent/v1/skill_pb.js";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { readTerms, defaultTermsPath } from "../../src/marketplace/terms.js";
import { grpcClient } from "../support/grpc-client.js";
import { startSmtpServer, type TestSmtpServer } from "../support/smtp.js";
import { adminKey, backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

// Every row of spec section 3 for skills and the marketplace, over REST, against both databases, with a
// real SMTP server in this process receiving the author emails.

type Call = ReturnType<typeof rest>;

const pdfSkill = {
  name: "pdf-tables",
  description: "Extracts tables from PDF invoices and statements into CSV. Use when a PDF holds tabular data.",
  content: "# PDF tables\n\n1. Open the PDF.\n2. Find the tables.\n",
  license: "MIT",
  tags: ["pdf"],
};

const terms = readTerms(defaultTermsPath);

describe.each(backends)("marketplace over REST (%s)", (backend) => {
  let server: TestServer;
  let smtp: TestSmtpServer;
  let alice: Call;
  let bob: Call;
  let carol: Call;
  let admin: Call;

  const skills = (call: Call, route: string, body: unknown) => call("POST", `/api/v1/agent/skills${route}`, body);
  const market = (call: Call, route: string, body: unknown) => call("POST", `/api/v1/agent/marketplace/${route}`, body);
  const ids = (res: { body: { skills: Array<{ id: string }> } }) => res.body.skills.map((s) => s.id);
  const setProfile = (workspace: string, body: unknown) => admin("PUT", `/api/v1/admin/workspaces/${workspace}/profile`, body);

  beforeAll(async () => {
    smtp = await startSmtpServer();
    server = await startTestServer(backend, { MARKETPLACE_ENABLED: "true", SMTP_URL: smtp.url, EMAIL_RETRY_BASE_MS: "20" });
    alice = rest(server.url, await server.createKey("alice-ws", "agent-1"));
    bob = rest(server.url, await server.createKey("Bob_Corp"));
    carol = rest(server.url, await server.createKey("carol-ws"));
    admin = rest(server.url, adminKey);
    expect((await setProfile("alice-ws", { authorHandle: "alice", email: "alice@example.com" })).body).toEqual({
      workspace: "alice-ws",
      authorHandle: "alice",
      email: "alice@example.com",
      verified: false,
    });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it("publish, search, install (read-only), fork (copyleft), report, takedown, appeal, grant and deny, with the author emailed", async () => {
    const created = (await skills(alice, "", pdfSkill)).body.skill;
    const published = await skills(alice, "/publish-public", { id: created.id });
    expect(published.status).toBe(200);
    expect(published.body).toMatchObject({ termsVersion: terms.version, skill: { id: created.id, visibility: "public", listingState: "listed" } });
    const [row] = await server.app.db.query<{ terms_version: string; kind: string }>(
      "select terms_version, kind from marketplace_publications where skill_id = $1",
      [created.id],
    );
    expect(row).toEqual({ terms_version: terms.version, kind: "publish" });

    // Search finds it from another workspace, by meaning and by browsing.
    const found = await market(bob, "search", { query: "pull the tables out of a scanned invoice pdf" });
    expect(found.status).toBe(200);
    expect(found.body.skills[0]).toMatchObject({ id: created.id, slug: "pdf-tables", authorHandle: "alice", name: "pdf-tables", installs: 0, forks: 0 });
    expect(found.body.skills[0].similarity).toBeGreaterThan(0);
    expect(ids(await market(bob, "search", { sort: "new" }))).toContain(created.id);

    // Install: a private, read-only copy.
    const installed = await market(bob, "install", { id: created.id });
    expect(installed.status).toBe(200);
    expect(installed.body).toMatchObject({
      created: true,
      skill: { source: "installed", visibility: "private", installedFrom: { id: created.id, version: 1 }, slug: "pdf-tables", content: pdfSkill.content, license: "MIT" },
    });
    const copy = installed.body.skill;
    for (const [route, body] of [
      ["/update", { id: copy.id, description: "Mine now." }],
      ["/deprecate", { id: copy.id }],
      ["/import", { content: `---\nname: pdf-tables\ndescription: Mine now.\n---\n# x\n` }],
    ] as const) {
      const refused = await skills(bob, route, body);
      expect(refused.status, route).toBe(403);
      expect(refused.body.error).toMatchObject({ code: "forbidden", details: { id: copy.id, reason: "read_only", installedFrom: created.id } });
      expect(refused.body.error.message).toContain("read-only");
    }

    // A new version of the original publishes; installing again updates the copy instead of making a second one.
    const v2 = await skills(alice, "/update", { id: created.id, description: "Extracts tables from PDF files into CSV or JSON. Use for invoices and statements." });
    expect(v2.body.skill.version).toBe(2);
    expect((await market(carol, "get", { id: created.id })).body.skill).toMatchObject({ version: 2, description: v2.body.skill.description });
    const again = await market(bob, "install", { id: created.id });
    expect(again.body).toMatchObject({ created: false, skill: { id: copy.id, version: 2, installedFrom: { id: created.id, version: 2 } } });
    expect((await market(bob, "install", { id: created.id })).body).toMatchObject({ created: false, skill: { id: copy.id, version: 2 } });
    expect((await skills(bob, "/list", { source: ["installed"] })).body.skills.map((s: { id: string }) => s.id)).toEqual([copy.id]);
    expect((await market(carol, "get", { id: created.id })).body.skill.installs).toBe(1);

    // Fork: public from creation, the original's licence, an immutable lineage.
    const forked = await market(carol, "fork", { id: created.id, slug: "carol-pdf" });
    expect(forked.status).toBe(200);
    const fork = forked.body.skill;
    expect(forked.body.termsVersion).toBe(terms.version);
    expect(fork).toMatchObject({
      slug: "carol-pdf",
      source: "forked",
      visibility: "public",
      listingState: "listed",
      forkOf: created.id,
      license: "MIT",
      lineage: [{ id: created.id, slug: "pdf-tables", authorHandle: "alice", version: 2 }],
    });
    expect((await market(bob, "get", { id: created.id })).body.skill.forks).toBe(1);
    for (const [route, body] of [
      ["/unpublish", { id: fork.id }],
      ["/deprecate", { id: fork.id }],
      ["/update", { id: fork.id, license: "Proprietary" }],
    ] as const) {
      const locked = await skills(carol, route, body);
      expect(locked.status, route).toBe(409);
      expect(locked.body.error).toMatchObject({ code: "COPYLEFT_LOCKED", details: { id: fork.id } });
    }
    const edited = await skills(carol, "/update", { id: fork.id, content: "# Carol's PDF tables\n" });
    expect(edited.body.skill).toMatchObject({ version: 2, visibility: "public", forkOf: created.id, lineage: fork.lineage });
    const forkOfFork = (await market(bob, "fork", { id: fork.id, slug: "bob-pdf" })).body.skill;
    expect(forkOfFork.lineage).toEqual([
      { id: fork.id, slug: "carol-pdf", authorHandle: "carol-ws", version: 2 },
      { id: created.id, slug: "pdf-tables", authorHandle: "alice", version: 2 },
    ]);
    expect((await market(alice, "get", { slug: "bob-pdf", authorHandle: "bob-corp" })).body.skill).toMatchObject({ id: forkOfFork.id, lineage: forkOfFork.lineage });
    // Search results mark a fork with its parent, so a fork that keeps its original's name is told apart.
    const browsed = (await market(alice, "search", { sort: "new", limit: 50 })).body.skills as Array<{ id: string; forkOf?: unknown }>;
    expect(browsed.find((s) => s.id === forkOfFork.id)?.forkOf).toEqual({ id: fork.id, slug: "carol-pdf", authorHandle: "carol-ws", version: 2 });
    expect(browsed.find((s) => s.id === created.id)).not.toHaveProperty("forkOf");
    // Handles and slugs are lowercase by rule, so a name typed in capitals finds the same skill.
    expect((await market(alice, "get", { slug: "Bob-PDF", authorHandle: "BOB-Corp" })).body.skill).toMatchObject({ id: forkOfFork.id });

    // Report: one open report per workspace and skill.
    const report = await market(bob, "report", { id: created.id, reason: "copyright", message: "Copies chapter 3 of our manual." });
    expect(report.body).toMatchObject({ created: true, report: { skillId: created.id, reason: "copyright", status: "open" } });
    expect(report.body.report.reporterWorkspace).toBeUndefined();
    const repeat = await market(bob, "report", { id: created.id, reason: "spam" });
    expect(repeat.body).toMatchObject({ created: false, report: { id: report.body.report.id, reason: "copyright" } });
    const open = await admin("GET", `/api/v1/admin/marketplace/reports?status=open&skillId=${created.id}`);
    expect(open.status, JSON.stringify(open.body)).toBe(200);
    expect(open.body.reports).toEqual([expect.objectContaining({ id: report.body.report.id, reporterWorkspace: "Bob_Corp", status: "open" })]);

    // Takedown: gone from search and get, its reports resolved, the author emailed how to appeal.
    const takedown = await admin("POST", `/api/v1/admin/marketplace/skills/${created.id}/takedown`, { reason: "copyright", details: "Notice 42 from ACME Publishing." });
    expect(takedown.status).toBe(200);
    expect(takedown.body).toMatchObject({ reportsResolved: 1, action: { action: "takedown", skillId: created.id, reason: "copyright", actor: "admin" } });
    const notice = await smtp.delivered((m) => m.subject.includes("removed"));
    expect(notice.to).toEqual(["alice@example.com"]);
    expect(notice.subject).toBe("Your skill alice/pdf-tables was removed from the marketplace");
    for (const text of ["Reason: copyright", "Details:", "> Notice 42 from ACME Publishing.", "POST /api/v1/agent/marketplace/appeal", `{"id": "${created.id}", "message":`, "skill_appeal"]) {
      expect(notice.body).toContain(text);
    }
    expect(ids(await market(bob, "search", { query: "pull the tables out of a scanned invoice pdf" }))).not.toContain(created.id);
    expect(ids(await market(bob, "search", { sort: "popular" }))).not.toContain(created.id);
    for (const route of ["get", "install", "fork", "report"]) {
      const gone = await market(carol, route, { id: created.id, ...(route === "report" ? { reason: "spam" } : {}) });
      expect(gone.status, route).toBe(404);
      expect(gone.body.error.code).toBe("not_found");
    }
    expect((await market(alice, "get", { id: created.id })).body.skill.listingState).toBe("removed");
    expect((await skills(bob, "/get", { id: copy.id })).body.skill.content).toBe(pdfSkill.content);
    expect((await admin("GET", `/api/v1/admin/marketplace/reports?skillId=${created.id}`)).body.reports[0].status).toBe("actioned");
    const republish = await skills(alice, "/publish-public", { id: created.id });
    expect(republish.status).toBe(403);
    expect(republish.body.error.details.reason).toBe("removed");

    // Appeal; a second one while it is pending conflicts; grant lists it again and emails the author.
    const appeal = await market(alice, "appeal", { id: created.id, message: "The manual is ours; see the licence." });
    expect(appeal.status).toBe(200);
    expect(appeal.body.appeal).toMatchObject({ skillId: created.id, status: "pending" });
    const second = await market(alice, "appeal", { id: created.id, message: "Please." });
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: "APPEAL_CONFLICT", details: { reason: "appeal_pending", pendingAppealId: appeal.body.appeal.id } });
    expect((await admin("GET", "/api/v1/admin/marketplace/appeals?status=pending")).body.appeals).toEqual([
      expect.objectContaining({ id: appeal.body.appeal.id, workspace: "alice-ws" }),
    ]);
    const granted = await admin("POST", `/api/v1/admin/marketplace/appeals/${appeal.body.appeal.id}/grant`, { note: "Licence verified." });
    expect(granted.body.appeal).toMatchObject({ status: "granted", decisionNote: "Licence verified.", decidedBy: "admin" });
    const grantMail = await smtp.delivered((m) => m.subject.includes("granted"));
    expect(grantMail).toMatchObject({ to: ["alice@example.com"], subject: "Your appeal for alice/pdf-tables was granted" });
    expect(grantMail.body).toContain("Moderator's note:");
    expect(grantMail.body).toContain("> Licence verified.");
    expect(ids(await market(bob, "search", { query: "pull the tables out of a scanned invoice pdf" }))).toContain(created.id);
    const regrant = await admin("POST", `/api/v1/admin/marketplace/appeals/${appeal.body.appeal.id}/grant`, {});
    expect(regrant.status).toBe(409);
    expect(regrant.body.error.code).toBe("APPEAL_CONFLICT");
    const notRemoved = await market(alice, "appeal", { id: created.id, message: "Again." });
    expect(notRemoved.status).toBe(409);
    expect(notRemoved.body.error).toMatchObject({ code: "APPEAL_CONFLICT", details: { reason: "not_removed" } });

    // Deny keeps it removed.
    await admin("POST", `/api/v1/admin/marketplace/skills/${created.id}/takedown`, { reason: "malware" });
    const appeal2 = (await market(alice, "appeal", { id: created.id, message: "No malware here." })).body.appeal;
    const denied = await admin("POST", `/api/v1/admin/marketplace/appeals/${appeal2.id}/deny`, { note: "The script exfiltrates files." });
    expect(denied.body.appeal.status).toBe("denied");
    const denyMail = await smtp.delivered((m) => m.subject.includes("denied"));
    expect(denyMail.body).toContain("stays removed");
    expect(denyMail.body).toContain("> The script exfiltrates files.");
    expect((await market(bob, "get", { id: created.id })).status).toBe(404);
    expect(ids(await market(bob, "search", { query: "pull the tables out of a scanned invoice pdf" }))).not.toContain(created.id);

    const stats = (await admin("GET", "/api/v1/admin/marketplace/stats")).body;
    expect(stats).toMatchObject({ takedowns: 2, appealsGranted: 1, appealsDenied: 1, appealsPending: 0 });
    expect(stats.reports).toContainEqual({ reason: "copyright", open: 0, actioned: 1, dismissed: 0 });
    expect(stats.medianReportDecisionSeconds).toBeGreaterThanOrEqual(0);
    expect(stats.medianAppealDecisionSeconds).toBeGreaterThanOrEqual(0);
    const actions = (await admin("GET", `/api/v1/admin/marketplace/actions?skillId=${created.id}`)).body.actions;
    expect(actions.map((a: { action: string }) => a.action)).toEqual(["deny", "takedown", "grant", "takedown"]);
    expect(actions.every((a: { actor: string; createdAt: string }) => a.actor === "admin" && Date.parse(a.createdAt) > 0)).toBe(true);
    await smtp.delivered((m) => m.subject.includes("removed") && m !== notice);
    const emails = (await admin("GET", "/api/v1/admin/emails")).body.emails.filter((e: { skillId: string }) => e.skillId === created.id);
    expect(emails.map((e: { kind: string }) => e.kind)).toEqual(["appeal_denied", "takedown", "appeal_granted", "takedown"]);
  });

  it("never shows one workspace's private skills to another", async () => {
    const hidden = (await skills(carol, "", { ...pdfSkill, name: "carol-private", description: "Private notes about quarterly PDF invoice tables." })).body.skill;
    for (const route of ["get", "install", "fork", "report"]) {
      expect((await market(bob, route, { id: hidden.id, ...(route === "report" ? { reason: "spam" } : {}) })).status, route).toBe(404);
    }
    expect((await market(bob, "get", { slug: "carol-private", authorHandle: "carol-ws" })).status).toBe(404);
    expect(ids(await market(bob, "search", { query: "quarterly PDF invoice tables private notes", limit: 50 }))).not.toContain(hidden.id);
    expect(ids(await market(bob, "search", { sort: "new", limit: 50 }))).not.toContain(hidden.id);
    expect((await skills(bob, "/get", { id: hidden.id })).status).toBe(404);
    expect((await market(bob, "appeal", { id: hidden.id, message: "mine?" })).status).toBe(404);
    expect((await skills(bob, "/publish-public", { id: hidden.id })).status).toBe(404);
  });

  it("unpublishes a skill that is not a fork: private again, gone from the marketplace; publishing again lists it", async () => {
    const s = (await skills(alice, "", { ...pdfSkill, name: "csv-cleaner", description: "Cleans messy CSV exports: trims, dedupes and fixes dates." })).body.skill;
    await skills(alice, "/publish-public", { id: s.id });
    const unpublished = await skills(alice, "/unpublish", { id: s.id });
    expect(unpublished.body.skill).toMatchObject({ visibility: "private", listingState: "unlisted" });
    expect((await market(bob, "get", { id: s.id })).status).toBe(404);
    expect(ids(await market(bob, "search", { query: "clean up a messy csv export" }))).not.toContain(s.id);
    expect((await skills(alice, "/publish-public", { id: s.id })).body.skill.listingState).toBe("listed");
    expect(ids(await market(bob, "search", { query: "clean up a messy csv export" }))).toContain(s.id);
  });

  it("browses by popularity and by date, a page at a time, filtered by tags", async () => {
    const made: string[] = [];
    for (const name of ["browse-a", "browse-b", "browse-c"]) {
      const s = (await skills(carol, "", { ...pdfSkill, name, tags: ["browse"] })).body.skill;
      await skills(carol, "/publish-public", { id: s.id });
      made.push(s.id);
    }
    await market(bob, "install", { id: made[0] });
    const first = await market(alice, "search", { sort: "new", tags: ["browse"], limit: 2 });
    expect(ids(first)).toEqual([made[2], made[1]]);
    const second = await market(alice, "search", { sort: "new", tags: ["browse"], limit: 2, pageToken: first.body.nextPageToken });
    expect(ids(second)).toEqual([made[0]]);
    expect(second.body.nextPageToken).toBeUndefined();
    const popular = await market(alice, "search", { tags: ["browse"] });
    expect(ids(popular)[0]).toBe(made[0]);
    expect(popular.body.skills[0].installs).toBe(1);
    const wrongToken = await market(alice, "search", { sort: "popular", tags: ["browse"], pageToken: first.body.nextPageToken });
    expect(wrongToken.body.error).toMatchObject({ code: "invalid_request", details: { field: "pageToken" } });
  });

  it("limits appeals to 5 a day per owner, with Retry-After", async () => {
    const dave = rest(server.url, await server.createKey("dave-ws"));
    const s = (await skills(dave, "", { ...pdfSkill, name: "dave-skill" })).body.skill;
    await skills(dave, "/publish-public", { id: s.id });
    await admin("POST", `/api/v1/admin/marketplace/skills/${s.id}/takedown`, { reason: "spam" });
    for (let i = 0; i < 5; i++) {
      const a = await market(dave, "appeal", { id: s.id, message: `try ${i}` });
      expect(a.status).toBe(200);
      await admin("POST", `/api/v1/admin/marketplace/appeals/${a.body.appeal.id}/deny`, {});
    }
    const limited = await market(dave, "appeal", { id: s.id, message: "sixth" });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatchObject({ code: "rate_limited", details: { limit: "appeals" } });
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(86_000);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    expect(limited.body.error.details.retryAfter).toBe(String(retryAfter));
  });

  it("validates requests and author profiles", async () => {
    const bad = async (call: Call, route: string, body: unknown, field: string, rule: string) => {
      const res = await market(call, route, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.details).toMatchObject({ field, rule });
    };
    await bad(bob, "report", { id: "skl_x" }, "reason", "required");
    await bad(bob, "appeal", { id: "skl_x", message: "  " }, "message", "required");
    await bad(bob, "search", { query: "pdf", sort: "new" }, "sort", "with_query");
    await bad(bob, "search", { pageToken: "bm90IGEgdG9rZW4" }, "pageToken", "format");
    await bad(bob, "search", { limit: 51 }, "limit", "max");
    await bad(bob, "get", {}, "id", "one_of");
    await bad(bob, "get", { slug: "x" }, "authorHandle", "required");
    await bad(bob, "install", {}, "id", "required");
    await bad(bob, "fork", { id: "skl_x", slug: "Not A Slug" }, "slug", "format");
    await bad(bob, "fork", { id: "skl_x", name: "Mine\r\nBcc: x@evil.test" }, "name", "one_line");

    const taken = await setProfile("carol-ws", { authorHandle: "alice" });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ code: "already_exists", details: { field: "authorHandle" } });
    expect((await setProfile("carol-ws", { authorHandle: "Carol!" })).body.error.details).toMatchObject({ field: "authorHandle", rule: "format" });
    expect((await setProfile("carol-ws", { email: "not-an-email" })).body.error.details).toMatchObject({ field: "email" });
    expect((await setProfile("alice-ws", { email: "" })).body).toEqual({ workspace: "alice-ws", authorHandle: "alice", verified: false });
    expect((await setProfile("alice-ws", { email: "alice@example.com" })).body.email).toBe("alice@example.com");
  });

  it("serves the content terms", async () => {
    const res = await market(bob, "terms", {});
    expect(res.body).toEqual({ version: terms.version, content: terms.content });
    expect(res.body.content).toContain("Forks are copyleft");
  });

  /** The main path with generated clients over one protocol; refusals carry the spec's code in ErrorInfo. */
  async function mainPath(transport: Transport, slug: string) {
    const author = { authorization: `Bearer ${await server.createKey(`${slug}-author`)}` };
    const user = { authorization: `Bearer ${await server.createKey(`${slug}-user`)}` };
    const moderator = { authorization: `Bearer ${adminKey}` };
    const skillsOf = createClient(SkillService, transport);
    const marketOf = createClient(MarketplaceService, transport);
    const moderation = createClient(ModerationService, transport);
    const refusal = async (call: Promise<unknown>) => {
      const err = ConnectError.from(await call.then(() => undefined, (e: unknown) => e));
      return { code: err.code, reason: err.findDetails(ErrorInfoSchema)[0]?.reason };
    };

    const { skill } = await skillsOf.createSkill(
      { name: slug, description: `Rotates ${slug} database credentials without downtime and checks every client reconnects.`, content: "# Rotate\n", license: "Apache-2.0" },
      { headers: author },
    );
    const id = skill!.id;
    expect((await skillsOf.publishSkill({ id }, { headers: author })).skill?.listingState).toBe(ListingState.LISTED);
    const found = await marketOf.searchMarketplace({ query: `rotate the ${slug} database password safely` }, { headers: user });
    expect(found.skills[0]?.id).toBe(id);
    const installed = await marketOf.installSkill({ id }, { headers: user });
    expect(installed.skill).toMatchObject({ source: SkillSource.INSTALLED, installedFrom: { id, version: 1 } });
    expect(await refusal(skillsOf.updateSkill({ id: installed.skill!.id, content: "# mine\n" }, { headers: user }))).toEqual({ code: Code.PermissionDenied, reason: "forbidden" });
    const fork = (await marketOf.forkSkill({ id, slug: `${slug}-fork` }, { headers: user })).skill!;
    expect(fork).toMatchObject({ source: SkillSource.FORKED, forkOf: id, license: "Apache-2.0" });
    expect(await refusal(skillsOf.unpublishSkill({ id: fork.id }, { headers: user }))).toEqual({ code: Code.FailedPrecondition, reason: "COPYLEFT_LOCKED" });
    expect((await marketOf.reportSkill({ id, reason: ReportReason.MALWARE }, { headers: user })).created).toBe(true);
    const takedown = await moderation.takedownSkill({ id, reason: ReportReason.MALWARE, details: "Runs curl | sh." }, { headers: moderator });
    expect(takedown.reportsResolved).toBe(1);
    expect((await marketOf.searchMarketplace({ query: `rotate the ${slug} database password safely` }, { headers: user })).skills.map((s) => s.id)).not.toContain(id);
    const appeal = (await marketOf.appealTakedown({ id, message: "It only reads." }, { headers: author })).appeal!;
    expect(await refusal(marketOf.appealTakedown({ id, message: "Again." }, { headers: author }))).toEqual({ code: Code.Aborted, reason: "APPEAL_CONFLICT" });
    await moderation.grantAppeal({ id: appeal.id, note: "Checked." }, { headers: moderator });
    expect((await marketOf.searchMarketplace({ query: `rotate the ${slug} database password safely` }, { headers: user })).skills[0]?.id).toBe(id);
    expect((await marketOf.getMarketplaceSkill({ id }, { headers: user })).skill?.forks).toBe(1);
    return { id, user: user.authorization.slice("Bearer ".length) };
  }

  it("runs the main path over Connect", async () => {
    await mainPath(createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }), "connectdb");
  });

  it("runs the main path over gRPC, and an independent gRPC client reads the marketplace", async () => {
    const { id, user } = await mainPath(createGrpcTransport({ baseUrl: server.url }), "grpcdb");
    const client = grpcClient(server.url, "MarketplaceService", user);
    try {
      const got = (await client.call("getMarketplaceSkill", { id })) as { skill: { id: string; listingState: string; installs: number } };
      expect(got.skill).toMatchObject({ id, listingState: "LISTING_STATE_LISTED", installs: 1 });
    } finally {
      client.close();
    }
  });
});
