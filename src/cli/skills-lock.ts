import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { skillDigest } from "../skills/skill-digest.js";
import { exportedSkillMd, fileBytes } from "../skills/skill-export.js";
import type { StoredFile } from "../skills/skill-rules.js";
import { CliError } from "./server.js";
import { filesUnder } from "./skill-dir.js";

// `agentmem skills lock|verify|install --from`: the workspace's installed marketplace skills pinned by
// version and digest (docs/reference/skill-digest.md), checked against the server and the exported files,
// and installed again elsewhere exactly.

export const lockUsage = `  agentmem skills lock [--out skills-lock.json]   write the installed skills with version and digest
  agentmem skills verify [--lock skills-lock.json] [--dir <dir>]
                                                 recompute every digest from the server (and <dir>/<slug>/)
  agentmem skills install --from skills-lock.json  install exactly the locked versions`;

export interface LockEntry {
  /** The marketplace skill's id, slug and author handle. */
  id: string;
  slug: string;
  authorHandle: string;
  version: number;
  digest: string;
  /** The installed copy's slug (slug-2, ... when the workspace had the slug already). */
  installedAs: string;
}

interface Lockfile {
  lockfileVersion: 1;
  skills: LockEntry[];
}

type Call = (route: string, body: unknown) => Promise<{ ok: boolean; json: any }>;

const optionOf = (args: string[], name: string, fallback?: string): string | undefined => {
  const at = args.indexOf(name);
  if (at === -1) return fallback;
  const value = args[at + 1];
  if (value === undefined || value.startsWith("--")) throw new CliError(`${name} needs a value`);
  return value;
};

async function readLock(file: string): Promise<Lockfile> {
  const parsed = JSON.parse(await readFile(file, "utf8")) as Lockfile;
  if (parsed.lockfileVersion !== 1 || !Array.isArray(parsed.skills)) throw new CliError(`${file} is not a skills lockfile (lockfileVersion 1)`);
  return parsed;
}

const must = async (call: Call, route: string, body: unknown) => {
  const { ok, json } = await call(route, body);
  if (!ok) throw new CliError(`${route} ${JSON.stringify(body)}: ${json.error?.code ?? "error"}: ${json.error?.message ?? ""}`);
  return json;
};

/** Every installed copy in the workspace, a page at a time. */
async function installedCopies(call: Call): Promise<Array<{ slug: string; installedFrom: { id: string; version: number; digest: string } }>> {
  const copies = [];
  let pageToken = "";
  do {
    const page = await must(call, "/skills/list", { source: ["installed"], pageSize: 100, pageToken });
    copies.push(...page.skills);
    pageToken = page.nextPageToken ?? "";
  } while (pageToken !== "");
  return copies;
}

async function lock(call: Call, args: string[]): Promise<number> {
  const out = optionOf(args, "--out", "skills-lock.json")!;
  const skills: LockEntry[] = [];
  for (const copy of await installedCopies(call)) {
    const { id, version, digest } = copy.installedFrom;
    const original = (await must(call, "/marketplace/get", { id, version })).skill;
    skills.push({ id, slug: original.slug, authorHandle: original.authorHandle, version, digest, installedAs: copy.slug });
  }
  skills.sort((a, b) => `${a.authorHandle}/${a.slug}`.localeCompare(`${b.authorHandle}/${b.slug}`));
  await writeFile(out, `${JSON.stringify({ lockfileVersion: 1, skills } satisfies Lockfile, null, 2)}\n`);
  console.log(JSON.stringify({ out, skills: skills.length }));
  return 0;
}

/**
 * The digest of a published version as the server answers it, recomputed here: its SKILL.md as the
 * server exports it, or, for a copy under another slug, the SKILL.md its fields write under that slug.
 */
function digestOfPublished(s: any, copySlug: string = s.slug, files = s.files): string {
  const skillMd =
    copySlug === s.slug
      ? (s.skillMd as string)
      : exportedSkillMd({
          slug: copySlug,
          name: s.name,
          description: s.description,
          content: s.content,
          tags: s.tags,
          maturity: s.maturity,
          license: s.license ?? null,
          compatibility: s.compatibility ?? null,
          allowedTools: s.allowedTools,
          metadata: s.metadata,
          extraFrontmatter: s.extraFrontmatter ?? {},
        });
  const bundled = (files as StoredFile[]).map((f) => ({ path: f.path, bytes: fileBytes(f) }));
  return skillDigest([{ path: "SKILL.md", bytes: Buffer.from(skillMd, "utf8") }, ...bundled]);
}

/** The digest of an exported skill directory on disk: SKILL.md and every other non-hidden file. */
async function digestOfDir(dir: string): Promise<string> {
  const paths = await filesUnder(dir);
  return skillDigest(await Promise.all(paths.map(async (rel) => ({ path: rel, bytes: await readFile(path.join(dir, rel)) }))));
}

async function verify(call: Call, args: string[]): Promise<number> {
  const file = optionOf(args, "--lock", "skills-lock.json")!;
  const dir = optionOf(args, "--dir");
  const { skills } = await readLock(file);
  const problems: Array<Record<string, unknown>> = [];
  const copies = new Map((await installedCopies(call)).map((c) => [c.installedFrom.id, c]));
  for (const entry of skills) {
    const name = `${entry.authorHandle}/${entry.slug}@${entry.version}`;
    const published = await call("/marketplace/get", { id: entry.id, version: entry.version });
    if (!published.ok) {
      problems.push({ skill: name, problem: "unreadable", error: published.json.error });
      continue;
    }
    const served = digestOfPublished(published.json.skill);
    if (served !== entry.digest) problems.push({ skill: name, problem: "digest", locked: entry.digest, server: served });
    if (published.json.skill.yanked) problems.push({ skill: name, problem: "yanked", reason: published.json.skill.yanked.reason, newestGoodVersion: published.json.skill.latestVersion });
    const copy = copies.get(entry.id);
    if (!copy) problems.push({ skill: name, problem: "not_installed" });
    else if (copy.installedFrom.version !== entry.version || copy.installedFrom.digest !== entry.digest) {
      problems.push({ skill: name, problem: "installed_version", locked: entry.version, installed: copy.installedFrom.version });
    }
    if (dir !== undefined && copy) {
      // On disk the copy is under its own slug; its export differs from the published version only by that name.
      const exported = await must(call, "/skills/export", { slug: copy.slug });
      const expected = copy.slug === entry.slug ? entry.digest : digestOfPublished(published.json.skill, copy.slug, exported.files);
      const onDisk = await digestOfDir(path.join(dir, copy.slug)).catch(() => undefined);
      if (onDisk !== expected) problems.push({ skill: name, problem: "files", dir: path.join(dir, copy.slug), expected, onDisk: onDisk ?? "missing" });
    }
  }
  for (const p of problems) console.error(JSON.stringify(p));
  console.log(JSON.stringify({ lock: file, skills: skills.length, problems: problems.length }));
  return problems.length === 0 ? 0 : 1;
}

async function installFrom(call: Call, args: string[]): Promise<number> {
  const file = optionOf(args, "--from");
  if (!file) throw new CliError("usage: agentmem skills install --from skills-lock.json");
  const { skills } = await readLock(file);
  let failed = 0;
  for (const entry of skills) {
    const name = `${entry.authorHandle}/${entry.slug}@${entry.version}`;
    const { ok, json } = await call("/marketplace/install", { id: entry.id, version: entry.version });
    if (!ok) {
      failed++;
      console.error(JSON.stringify({ skill: name, error: json.error }));
    } else if (json.skill.installedFrom.digest !== entry.digest) {
      failed++;
      console.error(JSON.stringify({ skill: name, problem: "digest", locked: entry.digest, installed: json.skill.installedFrom.digest }));
    } else {
      console.log(JSON.stringify({ skill: name, installedAs: json.skill.slug, created: json.created }));
    }
  }
  const locked = new Set(skills.map((s) => s.id));
  for (const extra of (await installedCopies(call)).filter((c) => !locked.has(c.installedFrom.id))) {
    console.error(JSON.stringify({ skill: extra.slug, problem: "not_in_lockfile" }));
  }
  return failed === 0 ? 0 : 1;
}

/** `skills lock|verify|install`; undefined for other commands. */
export function lockCommand(command: string | undefined, args: string[], call: Call): Promise<number> | undefined {
  if (command === "lock") return lock(call, args);
  if (command === "verify") return verify(call, args);
  if (command === "install") return installFrom(call, args);
  return undefined;
}
