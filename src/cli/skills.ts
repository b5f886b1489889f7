import { SingleBar } from "cli-progress";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { CliError, fetchServer } from "./server.js";
import { filesUnder } from "./skill-dir.js";
import { lockCommand, lockUsage } from "./skills-lock.js";

// `agentmem skills import|export`: moves skills in and out as SKILL.md directories, through the
// agent API at AGENTMEM_URL with AGENTMEM_API_KEY.

export const skillsUsage = `  agentmem skills import <dir-or-SKILL.md>...   import skill directories (SKILL.md and its other files)
  agentmem skills export <slug> <dir>            write a skill's SKILL.md and files into <dir>
${lockUsage}`;

interface SkillFileJson {
  path: string;
  text?: string;
  base64?: string;
}

/** The same bounds as the service: larger directories would be refused anyway. */
const maxFiles = 64;

/** POST to an agent route under /api/v1/agent, e.g. /skills/import. */
async function agentCall(route: string, body: unknown): Promise<{ ok: boolean; json: any }> {
  const key = process.env.AGENTMEM_API_KEY;
  if (!key) throw new CliError("AGENTMEM_API_KEY is not set");
  const res = await fetchServer(`/api/v1/agent${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { ok: res.ok, json: await res.json() };
}

const call = (route: string, body: unknown) => agentCall(`/skills${route}`, body);

/** A file as the API takes it: text when it is UTF-8 without NUL bytes, base64 otherwise. */
function fileJson(relative: string, bytes: Buffer): SkillFileJson {
  const text = bytes.toString("utf8");
  const isText = !bytes.includes(0) && Buffer.from(text, "utf8").equals(bytes);
  return isText ? { path: relative, text } : { path: relative, base64: bytes.toString("base64") };
}

/** Every regular file under dir except the root SKILL.md and hidden entries, with / separated paths. */
async function bundledFiles(dir: string): Promise<SkillFileJson[]> {
  const paths = (await filesUnder(dir)).filter((rel) => rel !== "SKILL.md");
  if (paths.length > maxFiles) throw new CliError(`${dir} has more than ${maxFiles} files`);
  return Promise.all(paths.map(async (rel) => fileJson(rel, await readFile(path.join(dir, rel)))));
}

async function importOne(target: string): Promise<Record<string, unknown>> {
  const isDir = (await stat(target)).isDirectory();
  const skillMd = isDir ? path.join(target, "SKILL.md") : target;
  const content = await readFile(skillMd, "utf8");
  const files = isDir ? await bundledFiles(target) : [];
  const { ok, json } = await call("/import", { content, files });
  if (!ok) return { path: target, error: json.error };
  return { path: target, id: json.skill.id, slug: json.skill.slug, version: json.skill.version, created: json.created, warnings: json.warnings };
}

async function importAll(targets: string[]): Promise<boolean> {
  if (targets.length === 0) throw new CliError("name at least one skill directory or SKILL.md file");
  const bar = process.stdout.isTTY && targets.length > 1 ? new SingleBar({ format: "importing [{bar}] {value}/{total} {path}" }) : null;
  bar?.start(targets.length, 0, { path: "" });
  const results: Array<Record<string, unknown>> = [];
  for (const target of targets) {
    bar?.update({ path: target });
    results.push(await importOne(target).catch((err: Error) => ({ path: target, error: { message: err.message } })));
    bar?.increment();
  }
  bar?.stop();
  for (const r of results) (r.error ? console.error : console.log)(JSON.stringify(r));
  return results.every((r) => !r.error);
}

async function exportTo(slug: string | undefined, dir: string | undefined): Promise<boolean> {
  if (!slug || !dir) throw new CliError("usage: agentmem skills export <slug> <dir>");
  const { ok, json } = await call("/export", { slug });
  if (!ok) {
    console.error(JSON.stringify(json));
    return false;
  }
  const root = path.resolve(dir);
  const writes: Array<[string, string | Buffer]> = [[json.filename, json.content]];
  for (const f of json.files as SkillFileJson[]) writes.push([f.path, f.text ?? Buffer.from(f.base64 ?? "", "base64")]);
  for (const [relative, data] of writes) {
    const target = path.resolve(root, relative);
    // The service validates paths; this keeps a compromised server from writing outside <dir>.
    if (!target.startsWith(root + path.sep)) throw new CliError(`refusing to write ${relative} outside ${dir}`);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, data);
  }
  console.log(JSON.stringify({ slug, dir: root, files: writes.map(([p]) => p) }));
  return true;
}

/** Runs `agentmem skills <command> ...`; resolves to the process exit code. */
export async function skillsCommand(command: string | undefined, args: string[]): Promise<number> {
  if (command === "import") return (await importAll(args)) ? 0 : 1;
  if (command === "export") return (await exportTo(args[0], args[1])) ? 0 : 1;
  const locked = lockCommand(command, args, agentCall);
  if (locked) return locked;
  console.error(`usage:\n${skillsUsage}`);
  return 2;
}
