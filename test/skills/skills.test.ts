import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planEnv, testPlans } from "../usage/limits-env.js";
import { adminKey, backends, rest, startTestServer, type TestServer } from "../support/test-server.js";

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");

const skillsEnv = {
  ...planEnv,
  PLANS: JSON.stringify({ ...testPlans, twoskills: { memoriesStored: null, recallsPerMonth: null, costUnitsPerMonth: null, skillsStored: 2, rate: testPlans.free.rate } }),
};

const base = {
  name: "Deploy Checklist",
  description: "Walks through a production deployment: migrations, feature flags, canary and rollback plan.",
  content: "# Deploy\n\n1. Run migrations.\n2. Flip flags.\n",
};

describe.each(backends)("skills over REST (%s)", (backend) => {
  let server: TestServer;
  let agent: ReturnType<typeof rest>;
  let workspaceKey: ReturnType<typeof rest>;
  let otherWorkspace: ReturnType<typeof rest>;
  let otherContainer: ReturnType<typeof rest>;

  beforeAll(async () => {
    server = await startTestServer(backend, skillsEnv);
    agent = rest(server.url, await server.createKey("acme", "agent-1"));
    workspaceKey = rest(server.url, await server.createKey("acme"));
    otherContainer = rest(server.url, await server.createKey("acme", "agent-2"));
    otherWorkspace = rest(server.url, await server.createKey("globex", "agent-1"));
  });
  afterAll(() => server?.close());

  const post = (call: ReturnType<typeof rest>, route: string, body: unknown) => call("POST", `/api/v1/agent/skills${route}`, body);

  it("creates a skill with the spec's fields, reads it by id and by slug", async () => {
    const created = await post(agent, "", { ...base, tags: ["ops"], allowedTools: ["Bash(kubectl:*)", "Read"], metadata: { team: "sre" } });
    expect(created.status).toBe(200);
    const skill = created.body.skill;
    expect(skill).toMatchObject({
      slug: "deploy-checklist",
      name: "Deploy Checklist",
      description: base.description,
      content: base.content,
      maturity: "experimental",
      visibility: "private",
      state: "active",
      source: "authored",
      version: 1,
      containers: ["agent-1"],
      tags: ["ops"],
      allowedTools: ["Bash(kubectl:*)", "Read"],
      metadata: { team: "sre" },
      files: [],
    });
    expect(skill.id).toMatch(/^skl_[0-9a-z]{26}$/);
    expect(Date.parse(skill.createdAt)).toBeGreaterThan(0);

    const byId = await post(agent, "/get", { id: skill.id });
    expect(byId.status).toBe(200);
    expect(byId.body.skill).toEqual(skill);
    const bySlug = await post(agent, "/get", { slug: "deploy-checklist" });
    expect(bySlug.body.skill.id).toBe(skill.id);
  });

  it("answers 409 already_exists for a slug taken in the workspace, whoever's container holds it", async () => {
    const clash = await post(agent, "", { ...base, name: "deploy checklist!" });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toMatchObject({ code: "already_exists", details: { field: "slug", slug: "deploy-checklist" } });
    const fromOtherContainer = await post(otherContainer, "", { ...base, slug: "deploy-checklist" });
    expect(fromOtherContainer.status).toBe(409);
    // Another workspace may use the same slug.
    expect((await post(otherWorkspace, "", base)).status).toBe(200);
  });

  it("updates the given fields only as a new version; earlier versions stay readable; expectedVersion guards", async () => {
    const { skill } = (await post(agent, "", { ...base, slug: "versioned", tags: ["a"] })).body;
    const updated = await post(agent, "/update", { id: skill.id, description: "Second description of the deploy steps.", expectedVersion: 1 });
    expect(updated.status).toBe(200);
    expect(updated.body.skill).toMatchObject({ version: 2, description: "Second description of the deploy steps.", tags: ["a"], content: base.content });
    const stale = await post(agent, "/update", { slug: "versioned", content: "lost update", expectedVersion: 1 });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: "version_conflict", details: { field: "expectedVersion", currentVersion: "2" } });
    const cleared = await post(agent, "/update", { slug: "versioned", updateMask: "tags", maturity: "stable" });
    expect(cleared.body.skill).toMatchObject({ version: 3, tags: [], maturity: "experimental" });

    const v1 = await post(agent, "/get", { id: skill.id, version: 1 });
    expect(v1.body.skill).toMatchObject({ version: 1, description: base.description, tags: ["a"] });
    expect((await post(agent, "/get", { id: skill.id })).body.skill.version).toBe(3);
    expect((await post(agent, "/get", { id: skill.id, version: 9 })).status).toBe(404);
    const nothing = await post(agent, "/update", { id: skill.id });
    expect(nothing.body.error.details).toEqual({ field: "body", rule: "required" });
  });

  it("lists newest first, a page at a time, with filters", async () => {
    const ids: string[] = [];
    for (const [i, maturity] of (["beta", "stable", "beta"] as const).entries()) {
      ids.push((await post(agent, "", { ...base, slug: `listed-${i}`, tags: ["listing"], maturity })).body.skill.id);
    }
    const first = await post(agent, "/list", { tags: ["listing"], pageSize: 2 });
    expect(first.status).toBe(200);
    expect(first.body.skills.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.skills[0].files).toEqual([]);
    const second = await post(agent, "/list", { tags: ["listing"], pageSize: 2, pageToken: first.body.nextPageToken });
    expect(second.body.skills.map((s: { id: string }) => s.id)).toEqual([ids[0]]);
    expect(second.body.nextPageToken).toBeUndefined();
    const beta = await post(agent, "/list", { tags: ["listing"], maturity: ["beta"] });
    expect(beta.body.skills.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[0]]);
    const imported = await post(agent, "/list", { tags: ["listing"], source: ["imported"] });
    expect(imported.body.skills).toEqual([]);
  });

  it("finds a skill by meaning right after it is written, and leaves deprecated skills out unless asked", async () => {
    const kube = (await post(agent, "", {
      name: "kubernetes-pod-debugging",
      description: "Diagnoses crashing or pending Kubernetes pods: reads events, container logs and resource limits.",
      content: "kubectl describe pod",
      tags: ["search-test"],
    })).body.skill;
    const pdf = (await post(agent, "", {
      name: "pdf-form-filling",
      description: "Fills in PDF forms and extracts text from scanned documents.",
      content: "use pdftk",
      tags: ["search-test"],
    })).body.skill;
    const found = await post(agent, "/search", { query: "my container keeps restarting in the cluster", tags: ["search-test"] });
    expect(found.status).toBe(200);
    expect(found.body.skills[0]).toMatchObject({ id: kube.id });
    expect(found.body.skills[0].similarity).toBeGreaterThan(0);
    expect(found.body._meta).toMatchObject({ totalMs: expect.any(Number), searchMs: expect.any(Number), embedMs: expect.any(Number) });
    const semantic = await post(agent, "/search", { query: "complete a document's fields", tags: ["search-test"], searchMode: "semantic", limit: 1 });
    expect(semantic.body.skills.map((s: { id: string }) => s.id)).toEqual([pdf.id]);
    // A floor: nothing below minSimilarity, the default leaves out the unrelated, 0 gives the nearest whatever they score.
    const all = await post(agent, "/search", { query: "my container keeps restarting in the cluster", tags: ["search-test"], minSimilarity: 0 });
    expect(all.body.skills).toHaveLength(2);
    const floor = (all.body.skills[0].similarity + all.body.skills[1].similarity) / 2;
    const above = await post(agent, "/search", { query: "my container keeps restarting in the cluster", tags: ["search-test"], minSimilarity: floor });
    expect(above.body.skills.map((s: { id: string }) => s.id)).toEqual([kube.id]);
    const unrelated = await post(agent, "/search", { query: "bake sourdough bread with a crisp crust", tags: ["search-test"] });
    for (const s of unrelated.body.skills) expect(s.similarity).toBeGreaterThanOrEqual(0.3);
    const refused = await post(agent, "/search", { query: "q", minSimilarity: 2 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe("minSimilarity: must be 0 to 1");
    // Quoted words are words, not a phrase query the index cannot answer.
    const quoted = await post(agent, "/search", { query: '"restarting" "cluster"', tags: ["search-test"], searchMode: "keyword" });
    expect(quoted.status, JSON.stringify(quoted.body)).toBe(200);

    const deprecated = await post(agent, "/deprecate", { id: kube.id, message: "use the new one", replacedBy: pdf.slug });
    expect(deprecated.status).toBe(200);
    expect(deprecated.body.skill).toMatchObject({ state: "deprecated", deprecationMessage: "use the new one", replacedBy: pdf.id, version: 1 });
    const without = await post(agent, "/search", { query: "my container keeps restarting in the cluster", tags: ["search-test"] });
    expect(without.body.skills.map((s: { id: string }) => s.id)).not.toContain(kube.id);
    const withDeprecated = await post(agent, "/search", { query: "my container keeps restarting in the cluster", tags: ["search-test"], includeDeprecated: true });
    expect(withDeprecated.body.skills[0].id).toBe(kube.id);
    expect((await post(agent, "/list", { tags: ["search-test"] })).body.skills.map((s: { id: string }) => s.id)).toEqual([pdf.id]);
  });

  it("imports SKILL.md files (new skill, then a new version), with warnings, and exports them back", async () => {
    const first = await post(agent, "/import", { content: fixture("unknown-keys.md"), tags: ["imported"] });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ created: true, skill: { slug: "sql-review", name: "sql-review", source: "imported", version: 1, allowedTools: ["Read", "Grep"] } });
    expect(first.body.warnings.map((w: { field: string }) => w.field)).toEqual(["frontmatter.model", "frontmatter.user-invocable", "frontmatter.hooks"]);
    expect(first.body.skill.extraFrontmatter).toEqual({ model: "claude-opus", "user-invocable": "true", hooks: { pre: "lint", post: ["format", "test"] } });

    const again = await post(agent, "/import", { content: fixture("unknown-keys.md").replace("Check every", "Now check every") });
    expect(again.body).toMatchObject({ created: false, skill: { id: first.body.skill.id, version: 2, tags: ["imported"] } });

    const exported = await post(agent, "/export", { slug: "sql-review", version: 1 });
    expect(exported.status).toBe(200);
    expect(exported.body.filename).toBe("SKILL.md");
    expect(exported.body.content).toMatch(/^---\nname: sql-review\ndescription: /);
    expect(exported.body.content.endsWith("---\nCheck every `alter table` for a rewrite.\n")).toBe(true);
  });

  it("exports an imported SKILL.md byte for byte until its fields change, then writes it from the fields", async () => {
    for (const name of ["block-scalars.md", "crlf-bom.md"]) {
      const text = fixture(name);
      const imported = await post(agent, "/import", { content: text });
      expect(imported.status, name).toBe(200);
      const exported = await post(agent, "/export", { id: imported.body.skill.id });
      expect(exported.body.content, name).toBe(text);
    }
    const text = fixture("block-scalars.md");
    const { skill } = (await post(agent, "/import", { content: text })).body;
    const edited = await post(agent, "/update", { id: skill.id, description: "Drafts release notes from merged pull requests." });
    expect(edited.status).toBe(200);
    const rewritten = (await post(agent, "/export", { id: skill.id })).body.content;
    expect(rewritten).not.toBe(text);
    expect(rewritten).toMatch(/^---\nname: release-notes\ndescription: Drafts release notes from merged pull requests.\n/);
    // The imported version itself still exports as imported.
    expect((await post(agent, "/export", { id: skill.id, version: skill.version })).body.content).toBe(text);
  });

  it("import(export(skill)) gives the same skill, files and all", async () => {
    const created = (await post(workspaceKey, "", {
      ...base,
      slug: "round-trip",
      name: "Round Trip: the skill",
      maturity: "beta",
      tags: ["x", "y z"],
      license: "MIT",
      compatibility: "Node 20",
      allowedTools: ["Read", "Bash(npm test:*)"],
      metadata: { "key: with colon": "value\nwith newline", version: "1.0" },
      files: [
        { path: "scripts/run.sh", text: "#!/bin/sh\necho hi\n" },
        { path: "assets/blob.bin", base64: "AAECAw==" },
      ],
      content: "---\nnot frontmatter\r\n--- \nünï\n",
    })).body.skill;
    expect(created.containers).toEqual([]);
    const exported = (await post(workspaceKey, "/export", { id: created.id })).body;
    const reimported = await post(otherWorkspace, "/import", { content: exported.content, files: exported.files, containers: ["agent-1"] });
    expect(reimported.status).toBe(200);
    expect(reimported.body.warnings).toEqual([]);
    const { id, createdAt, updatedAt, source, containers, ...same } = created;
    expect(reimported.body.skill).toMatchObject(same);
    expect(reimported.body.skill.files).toEqual(created.files);
  });

  it("answers 400 naming the field and rule for bad input of every field", async () => {
    const files = [0, 1].map((i) => ({ path: `references/part-${i}.md`, text: "r".repeat(2_000_000) }));
    expect((await post(agent, "", { ...base, slug: "nearly-full", files })).status).toBe(200);
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ["", { ...base, name: " " }, "name", "required"],
      ["", { ...base, name: "n".repeat(129) }, "name", "max_length"],
      ["", { ...base, description: "" }, "description", "required"],
      ["", { ...base, description: "d".repeat(4097) }, "description", "max_length"],
      ["", { ...base, content: "" }, "content", "required"],
      ["", { ...base, content: "c".repeat(262_145) }, "content", "max_size"],
      ["", { ...base, slug: "Bad--Slug" }, "slug", "format"],
      ["", { ...base, slug: "s".repeat(65) }, "slug", "max_length"],
      ["", { ...base, name: "!!!" }, "slug", "required"],
      // One-line fields refuse control characters and line separators: a name could forge lines of a notice email.
      ["", { ...base, name: "Evil\r\nBcc: x@evil.test" }, "name", "one_line"],
      ["", { ...base, name: "Tab\there" }, "name", "one_line"],
      ["", { ...base, name: "Next\u0085line" }, "name", "one_line"],
      ["", { ...base, name: "Line\u2028separator" }, "name", "one_line"],
      ["", { ...base, tags: ["ok", "two\nlines"] }, "tags[1]", "one_line"],
      ["", { ...base, allowedTools: ["Bash(git\nlog)"] }, "allowedTools[0]", "one_line"],
      ["", { ...base, metadata: { "a\nb": "v" } }, "metadata", "one_line"],
      ["/update", { slug: "nearly-full", name: "Evil\nBcc: x@evil.test" }, "name", "one_line"],
      ["/import", { content: '---\nname: evil\ndescription: d\nmetadata:\n  agentmem.name: "Evil\\r\\nBcc: x@evil.test"\n---\nBody\n' }, "frontmatter.metadata.agentmem.name", "one_line"],
      ["/import", { content: '---\nname: "evil\\nBcc: x@evil.test"\ndescription: d\n---\nBody\n' }, "frontmatter.name", "format"],
      ["", { ...base, tags: [""] }, "tags[0]", "min_length"],
      ["", { ...base, tags: Array.from({ length: 33 }, (_, i) => `t${i}`) }, "tags", "max_items"],
      ["", { ...base, containers: ["bad container"] }, "containers[0]", "format"],
      ["", { ...base, maturity: "ancient" }, "maturity", "enum"],
      ["", { ...base, license: "" }, "license", "min_length"],
      ["", { ...base, compatibility: "c".repeat(2049) }, "compatibility", "max_length"],
      ["", { ...base, allowedTools: ["two tools"] }, "allowedTools[0]", "tool_name"],
      ["", { ...base, metadata: { k: "v".repeat(4097) } }, "metadata.k", "max_length"],
      ["", { ...base, files: [{ path: "../escape", text: "x" }] }, "files[0].path", "relative_path"],
      ["", { ...base, files: [{ path: "a", base64: "not base64!" }] }, "files[0].base64", "base64"],
      ["", { ...base, files: [{ path: "a", text: "x" }, { path: "a", text: "y" }] }, "files[1].path", "unique"],
      ["", { ...base, files: Array.from({ length: 65 }, (_, i) => ({ path: `f${i}`, text: "x" })) }, "files", "max_items"],
      // The request body limit is 4 MiB too: the body and files pass 4 MiB when the content grows.
      ["/update", { slug: "nearly-full", content: "c".repeat(200_000) }, "files", "max_size"],
      ["/get", {}, "id", "required"],
      ["/get", { id: "skl_x", slug: "y" }, "slug", "one_of"],
      ["/get", { slug: "deploy-checklist", version: 0 }, "version", "min"],
      ["/search", { query: " " }, "query", "required"],
      ["/search", { query: "q", limit: 101 }, "limit", "max"],
      ["/search", { query: "q", maturity: ["ancient"] }, "maturity[0]", "enum"],
      ["/list", { pageSize: 0 }, "pageSize", "range"],
      ["/list", { pageToken: "garbage" }, "pageToken", "format"],
      ["/update", { slug: "nearly-full", updateMask: "nope" }, "updateMask", "enum"],
      ["/update", { slug: "nearly-full", expectedVersion: 0, name: "x" }, "expectedVersion", "min"],
      ["/update", { slug: "nearly-full", description: "d".repeat(4097) }, "description", "max_length"],
      ["/update", { slug: "nearly-full", allowedTools: ["a,b"] }, "allowedTools[0]", "tool_name"],
      ["/deprecate", { slug: "nearly-full", message: "m".repeat(1025) }, "message", "max_length"],
      ["/import", { content: "no frontmatter" }, "content", "frontmatter"],
      ["/import", { content: "---\nname: loop\ndescription: d\nmetadata: &m {self: *m}\n---\n" }, "content", "yaml"],
      ["/export", {}, "id", "required"],
    ];
    const answers = [];
    for (const [route, body] of cases) {
      const res = await post(agent, route, body);
      answers.push({ route, status: res.status, field: res.body.error?.details?.field, rule: res.body.error?.details?.rule });
    }
    expect(answers).toEqual(cases.map(([route, , field, rule]) => ({ route, status: 400, field, rule })));
  });

  it("keeps multi-line text where it belongs: the description and the body", async () => {
    const created = await post(agent, "", { ...base, slug: "multi-line", description: "First line.\nSecond line.", content: "# T\r\n\r\n\tIndented.\u2028\n" });
    expect(created.status).toBe(200);
    expect(created.body.skill).toMatchObject({ description: "First line.\nSecond line.", content: "# T\r\n\r\n\tIndented.\u2028\n" });
  });

  it("answers 404 on every route for another workspace's skill", async () => {
    const theirs = (await post(otherWorkspace, "", { ...base, slug: "theirs-only" })).body.skill;
    for (const ref of [{ id: theirs.id }, { slug: "theirs-only" }]) {
      for (const [route, extra] of [["/get", {}], ["/update", { name: "mine now" }], ["/deprecate", {}], ["/export", {}]] as const) {
        const res = await post(agent, route, { ...ref, ...extra });
        expect({ route, status: res.status, code: res.body.error?.code }).toEqual({ route, status: 404, code: "not_found" });
      }
    }
    const search = await post(agent, "/search", { query: "deploy checklist production" });
    expect(search.body.skills.map((s: { id: string }) => s.id)).not.toContain(theirs.id);
    const list = await post(agent, "/list", { pageSize: 100 });
    expect(list.body.skills.map((s: { id: string }) => s.id)).not.toContain(theirs.id);
    const replaced = await post(agent, "/deprecate", { slug: "deploy-checklist", replacedBy: theirs.id });
    expect(replaced.status).toBe(404);
    // Importing the same slug creates this workspace's own skill; theirs is untouched.
    const own = await post(agent, "/import", { content: "---\nname: theirs-only\ndescription: mine\n---\n" });
    expect(own.body).toMatchObject({ created: true });
    expect((await post(otherWorkspace, "/get", { id: theirs.id })).body.skill.version).toBe(1);
  });

  it("scopes a container key: reads its container's and workspace-wide skills, writes only its container's", async () => {
    const wide = (await post(workspaceKey, "", { ...base, slug: "workspace-wide" })).body.skill;
    const second = (await post(otherContainer, "", { ...base, slug: "agent-2-only" })).body.skill;
    expect(second.containers).toEqual(["agent-2"]);
    expect((await post(agent, "/get", { id: wide.id })).status).toBe(200);
    expect((await post(agent, "/get", { id: second.id })).status).toBe(404);
    expect((await post(agent, "/update", { id: second.id, name: "x" })).status).toBe(404);
    const onWide = await post(agent, "/update", { id: wide.id, name: "x" });
    expect(onWide.status).toBe(403);
    expect(onWide.body.error.code).toBe("forbidden");
    expect((await post(agent, "/deprecate", { id: wide.id })).status).toBe(403);
    expect((await post(agent, "", { ...base, slug: "elsewhere", containers: ["agent-2"] })).status).toBe(403);
    expect((await post(agent, "/search", { query: "deploy", containers: ["agent-2"] })).status).toBe(403);
    const visible = (await post(agent, "/list", { pageSize: 100 })).body.skills.map((s: { id: string }) => s.id);
    expect(visible).toContain(wide.id);
    expect(visible).not.toContain(second.id);
    const found = (await post(agent, "/search", { query: "production deployment with canary and rollback", limit: 100 })).body.skills.map(
      (s: { id: string }) => s.id,
    );
    expect(found).toContain(wide.id);
    expect(found).not.toContain(second.id);
    // The workspace key sees and writes everything.
    expect((await post(workspaceKey, "/update", { id: second.id, maturity: "stable" })).body.skill.version).toBe(2);
  });

  it("counts skills in stats and refuses the one past the plan's skillsStored cap", async () => {
    const key = await server.createKey("capped", "agent-1");
    expect((await rest(server.url, adminKey)("PUT", "/api/v1/admin/workspaces/capped/plan", { plan: "twoskills" })).status).toBe(200);
    const capped = rest(server.url, key);
    expect((await post(capped, "", { ...base, slug: "one" })).status).toBe(200);
    expect((await post(capped, "/import", { content: "---\nname: two\ndescription: second\n---\n" })).status).toBe(200);
    const third = await post(capped, "", { ...base, slug: "three" });
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ code: "quota_exhausted", details: { limit: "skillsStored", plan: "twoskills" } });
    expect(third.headers.get("retry-after")).toMatch(/^\d+$/);
    // A new version is not a new skill.
    expect((await post(capped, "/update", { slug: "one", content: "v2" })).status).toBe(200);
    const stats = await capped("GET", "/api/v1/agent/stats");
    expect(stats.body).toMatchObject({ skillsStored: 2, limits: { skillsStored: 2 }, remaining: { skillsStored: 0 } });
    expect(stats.body.costUsed).toBeGreaterThan(0);
  });
});
