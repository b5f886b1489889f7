import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { defaultConsoleDir } from "../../src/console/console-dir.js";
import { adminKey, rest, startTestServer, type TestServer } from "../support/test-server.js";

// The console in a real browser (Debian's Chromium through playwright-core) against a real server: the
// issue's whole flow, from signing in to granting an appeal, with screenshots of every page at 1280 and
// 390 px in test/artifacts/console/. It asserts what the pages say and do, not how they look.

const root = path.resolve(import.meta.dirname, "../..");
const artifacts = path.join(root, "test/artifacts/console");
const sources = [path.join(root, "src/console/web"), path.join(root, "gen/agent")];
const chromiumPath = "/usr/bin/chromium";

const newest = (dir: string): number =>
  Math.max(...readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => statSync(path.join(e.parentPath, e.name)).mtimeMs));

/** Builds the console when dist/console is missing or older than its sources (npm ci builds it through `prepare`). */
function ensureBuilt(): void {
  const index = path.join(defaultConsoleDir, "index.html");
  let builtAt = 0;
  try {
    builtAt = statSync(index).mtimeMs;
  } catch {
    // Not built: built below.
  }
  if (builtAt > Math.max(...sources.map(newest))) return;
  try {
    execFileSync("npm", ["run", "build"], { cwd: root, stdio: "pipe" });
  } catch (err) {
    const e = err as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`the console is not built and \`npm run build\` failed:\n${e.stdout?.toString()}${e.stderr?.toString()}`);
  }
}

const skillMd = `---
name: release-notes
description: Writes release notes from merged pull requests. Use when preparing a release.
license: MIT
---
# Release notes

1. List the pull requests merged since the last tag.
2. Group them by **feature**, fix and chore.

<script>window.injected = "script"</script>
<img src="x" onerror="window.injected = 'handler'">
`;

describe("web console in Chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let authorKey: string;
  let reporterKey: string;
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureBuilt();
    if (!existsSync(chromiumPath)) throw new Error(`no browser at ${chromiumPath}: install Debian's chromium (apt-get install chromium), as .ci/run does`);
    mkdirSync(artifacts, { recursive: true });
    // The server and the browser start side by side. PostgreSQL, as the backend: opening PGlite alone took
    // 9 s of this file's 45 s budget on the loaded machine, a database on the test cluster well under one.
    const launching = chromium.launch({
      executablePath: chromiumPath,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    server = await startTestServer("postgres", { MARKETPLACE_ENABLED: "true" });
    authorKey = await server.createKey("author-ws", "agent-1");
    reporterKey = await server.createKey("reporter-ws");
    // The author's notice email: the takedown and the grant land in the outbox (no SMTP server: unsent).
    await rest(server.url, adminKey)("PUT", "/api/v1/admin/workspaces/author-ws/profile", { authorHandle: "author", email: "author@example.com" });
    browser = await launching;
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // Below the test's own timeout, so a wait that never ends names what it waited for.
    page.setDefaultTimeout(20_000);
    page.on("console", (msg) => {
      if (msg.text().includes("Content Security Policy")) cspViolations.push(`${page.url()}: ${msg.text()}`);
    });
    page.on("pageerror", (err) => pageErrors.push(err.message));
  });
  // Every step: no CSP violation and no script error on any page it showed.
  afterEach(() => {
    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** A full-page screenshot at both widths; at 390 px nothing may overflow the page sideways. */
  async function shoot(name: string) {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: path.join(artifacts, `${name}-${width}.png`), fullPage: true });
      if (width === 390) expect(await page.evaluate<number>("document.documentElement.scrollWidth"), `${name} fits 390 px`).toBeLessThanOrEqual(390);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  }

  async function signIn(key: string, landing: string) {
    await page.goto(`${server.url}/console/`);
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: landing }).waitFor();
    expect(page.url()).not.toContain(key);
  }

  async function signOut() {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API key").waitFor();
    expect(await page.evaluate<number>("sessionStorage.length")).toBe(0);
  }

  const goTo = (name: string) => page.getByRole("navigation", { name: "Pages" }).getByRole("link", { name }).click();
  const status = () => page.getByRole("status");
  /**
   * Waits until `locator` shows `text` (the UI answers when its call returns), or fails at once with what
   * the page reports instead.
   */
  async function shows(locator: Locator, text: string | RegExp) {
    const expected = locator.filter({ hasText: text }).first();
    const problem = page.getByRole("alert").first();
    await expected.or(problem).waitFor();
    if (!(await expected.isVisible())) throw new Error(`waiting for ${String(text)}, the page reports: ${await problem.textContent()}`);
  }
  /** Waits until a table or list has `n` rows (or items), then checks it has no more. */
  async function hasRows(rows: Locator, n: number) {
    await rows.nth(n - 1).waitFor();
    expect(await rows.count()).toBe(n);
  }
  let memoryId = "";
  let skillId = "";

  // One flow in steps: each goes on from where the one before left the page.
  it("signs in; stores a memory, lists it, edits it and shows the diff", async () => {
    // The real server serves the build with its security headers.
    const served = await fetch(`${server.url}/console/`);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(served.headers.get("referrer-policy")).toBe("no-referrer");

    // Sign in: the key lives in sessionStorage only.
    await page.goto(`${server.url}/console/`);
    await shoot("sign-in");
    await signIn(authorKey, "Memories");
    expect(await page.evaluate<string[]>("Object.values(sessionStorage)")).toContain(authorKey);
    // The header says which workspace and container the key belongs to.
    await shows(page.getByTestId("who"), "author-ws · agent-1");

    // Memories: store one through the form; it is listed.
    await page.getByText("New memory", { exact: true }).click();
    const newMemory = page.getByRole("form", { name: "New memory" });
    await newMemory.getByLabel("Content").fill("The staging database is PostgreSQL 15 on db-staging-2");
    await newMemory.getByLabel("Tags").fill("infra");
    await page.getByRole("button", { name: "Store memory" }).click();
    await shows(status(), /^Stored mem_/);
    memoryId = (await status().getByRole("link").textContent())!;
    const rows = page.getByRole("table", { name: "Memories" }).getByRole("row");
    await hasRows(rows, 2);
    expect(await rows.nth(1).textContent()).toContain("PostgreSQL 15");
    await shoot("memories");

    // Its detail: edit the content (version 2), and the diff shows what changed.
    await status().getByRole("link").click();
    await page.getByRole("heading", { name: `Memory ${memoryId}` }).waitFor();
    await page.getByText("Edit (a new version)").click();
    await page.getByRole("form", { name: "Edit memory" }).getByLabel("Content").fill("The staging database is PostgreSQL 16 on db-staging-2");
    await page.getByRole("button", { name: "Save as version 2" }).click();
    await page.getByRole("heading", { name: "Versions (2)" }).waitFor();
    expect(await page.locator(".diff del").first().textContent()).toBe("15");
    expect(await page.locator(".diff ins").first().textContent()).toBe("16");
    await shoot("memory");
  });

  it("recalls the memory with its why bars and receipt, opens its trace, and counts the recall on the usage chart", async () => {
    // Recall playground: the memory comes back with its why bars and the receipt's counts.
    await goTo("Recall");
    await page.getByLabel("Query").fill("which PostgreSQL version runs on staging?");
    await page.getByRole("button", { name: "Recall", exact: true }).click();
    const first = page.locator(".result-item").first();
    await first.waitFor();
    expect(await first.locator(".memory-content").textContent()).toBe("The staging database is PostgreSQL 16 on db-staging-2");
    // Each item shows its final score; the breakdown is drawn on demand.
    expect(Number(await first.getByTestId("final-score").textContent())).toBeGreaterThan(0);
    expect(await first.locator("svg.why-bars").isVisible()).toBe(false);
    await first.getByText("Score breakdown").click();
    expect(await first.locator("svg.why-bars").isVisible()).toBe(true);
    const bars = first.locator("svg.why-bars g.bar");
    expect(await bars.evaluateAll((gs) => gs.map((g) => g.getAttribute("data-factor")))).toEqual([
      "cosine",
      "keyword",
      "relevance",
      "recency",
      "severity",
      "confidence",
      "final",
    ]);
    const final = Number(await bars.last().getAttribute("data-value"));
    expect(final).toBeGreaterThan(0);
    expect(Number(await first.locator("g.bar-final rect.bar-value").getAttribute("width"))).toBeGreaterThan(0);
    expect(await page.getByTestId("returned").textContent()).toBe("1 returned");
    expect(Number((await page.getByTestId("tokens").textContent())!.split(" ")[0])).toBeGreaterThan(5);
    expect(await page.locator('[data-filtered="shadowed"]').textContent()).toBe("0");
    await shoot("recall");

    // Its trace: every candidate with its outcome.
    await page.getByRole("link", { name: /^Open trace / }).click();
    await page.getByRole("heading", { name: /^Trace / }).waitFor();
    const candidate = page.getByRole("table", { name: "Candidates" }).getByRole("row").filter({ hasText: memoryId });
    expect(await candidate.locator("[data-outcome]").textContent()).toBe("returned");
    await shoot("trace");
    await goTo("Traces");
    await hasRows(page.getByRole("table", { name: "Traces" }).getByRole("row"), 2);
    // The list shows how many candidates each recall considered.
    expect(Number(await page.getByTestId("trace-candidates").first().textContent())).toBeGreaterThan(0);
    await shoot("traces");

    // Usage: today's recall is on the chart.
    await goTo("Usage");
    await page.getByTestId("plan").waitFor();
    expect(await page.locator('[data-meter="Recalls this period"]').textContent()).toContain("1 (unlimited)");
    const today = new Date().toISOString().slice(0, 10);
    expect(await page.locator(".series-bar title").last().textContent()).toBe(`${today}: 1`);
    await shoot("usage");
  });

  it("imports a SKILL.md and then its folder, renders it safely, exports it as a ZIP and publishes it", async () => {
    // Skills: import a SKILL.md, rendered safely, then publish it.
    await goTo("Skills");
    await page.getByLabel("SKILL.md file").setInputFiles({ name: "SKILL.md", mimeType: "text/markdown", buffer: Buffer.from(skillMd) });
    await shows(status(), "Imported release-notes");
    await hasRows(page.getByRole("table", { name: "Skills" }).getByRole("row"), 2);
    // The same skill as a folder (SKILL.md and a script): a new version, with the file.
    const folder = mkdtempSync(path.join(os.tmpdir(), "release-notes-"));
    mkdirSync(path.join(folder, "scripts"));
    writeFileSync(path.join(folder, "SKILL.md"), skillMd);
    writeFileSync(path.join(folder, "scripts/notes.sh"), "#!/bin/sh\ngit log --merges --oneline\n");
    await page.getByLabel("Skill folder").setInputFiles(folder);
    // The page reads the files when it imports them: the folder stays until then.
    await shows(status(), "Updated to version 2: release-notes");
    rmSync(folder, { recursive: true });
    await shoot("skills");
    await status().first().getByRole("link", { name: "release-notes" }).click();
    const body = page.getByRole("article", { name: "release-notes SKILL.md" });
    expect(await body.getByRole("heading", { level: 1 }).textContent()).toBe("Release notes");
    expect(await body.locator("strong").textContent()).toBe("feature");
    // Raw HTML in a SKILL.md is shown as text, never run.
    expect(await body.locator("script, img").count()).toBe(0);
    expect(await body.textContent()).toContain(`<script>window.injected = "script"</script>`);
    expect(await page.evaluate<string | undefined>("window.injected")).toBeUndefined();
    expect(await page.getByRole("list", { name: "Files" }).textContent()).toContain("scripts/notes.sh");
    // Export: the folder as a ZIP.
    const downloading = page.waitForEvent("download");
    await page.getByRole("button", { name: "Export version 2" }).click();
    const zipFile = await downloading;
    expect(zipFile.suggestedFilename()).toBe("release-notes.zip");
    const zipped = readFileSync((await zipFile.path())!);
    expect(zipped.subarray(0, 4).toString("latin1")).toBe("PK\x03\x04");
    expect(zipped.toString("utf8")).toContain("release-notes/scripts/notes.sh");
    expect(zipped.toString("utf8")).toContain("git log --merges --oneline");
    await page.getByRole("button", { name: "Publish to the marketplace" }).click();
    await shows(page.getByTestId("listing-state"), /^listed$/);
    expect(await page.getByTestId("visibility").textContent()).toBe("public");
    await shoot("skill");
    skillId = page.url().split("/").at(-1)!;
    // Its own listing offers no install, fork or report.
    await page.goto(`${server.url}/console/#/marketplace/${skillId}`);
    await shows(page.getByTestId("own-listing"), "Your workspace publishes this skill");
    expect(await page.getByRole("button", { name: "Install" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Report", exact: true }).count()).toBe(0);
    await signOut();
  });

  it("reports the skill from another workspace; the admin takes it down, creates a key, sees the workspace and the author's email", async () => {
    // Another workspace finds it in the marketplace and reports it.
    await signIn(reporterKey, "Memories");
    await goTo("Marketplace");
    await page.getByRole("button", { name: "New" }).click();
    await page.getByRole("link", { name: "release-notes" }).click();
    await page.getByRole("heading", { level: 1, name: "release-notes" }).waitFor();
    expect(await page.locator(".facts").textContent()).toContain("author");
    await page.getByLabel("Reason").selectOption({ label: "spam" });
    await page.getByLabel("Report message").fill("Links to a spam site");
    await page.getByRole("button", { name: "Report", exact: true }).click();
    await shows(page.getByTestId("reported"), /^Reported: report rpt_\w+ is open\.$/);
    await shoot("marketplace-skill");
    // Its published version's digest and versions; an install holds that digest.
    const digest = (await page.getByTestId("digest").textContent())!;
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await page.getByRole("table", { name: "Published versions, newest first" }).getByRole("row").count()).toBe(2);
    await page.getByRole("button", { name: "Install", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Installed" }).getByRole("link").click();
    await shows(page.getByTestId("installed-digest"), new RegExp(`^${digest}$`));
    await goTo("Marketplace");
    await page.getByRole("list", { name: "Marketplace skills" }).waitFor();
    await shoot("marketplace");
    await signOut();

    // The admin sees the report under its reason and takes the skill down.
    await signIn(adminKey, "Admin: Moderation");
    const spam = page.getByRole("region", { name: "Reports for spam" });
    expect(await spam.getByRole("heading").textContent()).toBe("spam (1)");
    expect(await spam.textContent()).toContain(skillId);
    await shoot("admin-moderation");
    await spam.getByLabel("Takedown details").fill("Links to a spam site");
    await spam.getByRole("button", { name: "Take down" }).click();
    await shows(page.getByTestId("takedowns"), /^1$/);
    expect(await page.locator('[data-reason="spam"]').textContent()).toBe("spam010");
    expect(await page.getByText("No reports.").count()).toBe(1);

    // Keys: a new key's secret is shown once.
    await page.getByRole("navigation", { name: "Admin" }).getByRole("link", { name: "Keys" }).click();
    await page.getByText("New key", { exact: true }).click();
    await page.getByRole("form", { name: "New key" }).getByLabel("Workspace", { exact: true }).fill("ui-ws");
    await page.getByRole("button", { name: "Create key" }).click();
    const secret = page.getByLabel("New key secret");
    expect(await secret.inputValue()).toMatch(/^amk_/);
    await shoot("admin-keys");
    await page.getByRole("button", { name: "I have stored it" }).click();
    expect(await secret.count()).toBe(0);
    await page.getByRole("navigation", { name: "Admin" }).getByRole("link", { name: "Workspaces" }).click();
    const authorRow = page.getByRole("table", { name: "Workspaces" }).getByRole("row").filter({ hasText: "author-ws" });
    expect(await authorRow.textContent()).toContain("author@example.com");
    await shoot("admin-workspaces");
    await page.getByRole("navigation", { name: "Admin" }).getByRole("link", { name: "Email outbox" }).click();
    await hasRows(page.getByRole("list", { name: "Emails" }).getByRole("listitem"), 1);
    expect(await page.getByRole("list", { name: "Emails" }).textContent()).toContain("to author@example.com");
    await shoot("admin-emails");
    await signOut();
  });

  it("the author appeals the takedown; the admin grants it and the skill is listed again", async () => {
    // The author sees the takedown and appeals.
    await signIn(authorKey, "Memories");
    await page.goto(`${server.url}/console/#/skills/${skillId}`);
    await shows(page.getByTestId("listing-state"), /^removed$/);
    await page.getByLabel("Appeal message").fill("The links point to our own documentation.");
    await page.getByRole("button", { name: "Appeal", exact: true }).click();
    await shows(page.getByTestId("appealed"), /pending/);
    await signOut();

    // The admin grants the appeal: the skill is listed again.
    await signIn(adminKey, "Admin: Moderation");
    const appeal = page.getByRole("list", { name: "Appeals" }).getByRole("listitem");
    expect(await appeal.textContent()).toContain("The links point to our own documentation.");
    await appeal.getByLabel("Decision note").fill("Checked: the links are fine.");
    await appeal.getByRole("button", { name: "Grant" }).click();
    await shows(page.getByTestId("appeal-counts"), /^0 · 1 · 0$/);
    expect(await page.getByText("No appeals.").count()).toBe(1);
    await signOut();

    const listed = await rest(server.url, reporterKey)("POST", "/api/v1/agent/marketplace/get", { id: skillId });
    expect(listed.body.skill).toMatchObject({ id: skillId, listingState: "listed" });
  });
});
