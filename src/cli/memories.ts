import { SingleBar } from "cli-progress";
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { CliError, fetchServer } from "./server.js";

// `agentmem memories list|export|import`: browses, exports and bulk-loads memories through the agent REST
// API at AGENTMEM_URL with AGENTMEM_API_KEY. Export and import use JSON lines, one memory per line.

export const memoriesUsage = `  agentmem memories list [filters] [--limit <n>]       print memories as JSON lines, newest first (default 50)
  agentmem memories export [filters] [--out <file>]    every matching memory as JSON lines, page by page
  agentmem memories import <file.jsonl> [--batch-size <n>] [--include-shadowed]
                                                       create memories in batches; resumable (<file>.checkpoint)
    filters: --container <c> --type <t> --tag <t> (each repeatable), --state active|shadowed,
             --created-after <iso8601>, --created-before <iso8601>, --metadata '<JSON object>'`;

const filterOptions = {
  container: { type: "string", multiple: true },
  type: { type: "string", multiple: true },
  tag: { type: "string", multiple: true },
  state: { type: "string" },
  "created-after": { type: "string" },
  "created-before": { type: "string" },
  metadata: { type: "string" },
} as const;

/** The fields of an exported memory that a create takes; the rest (id, version, times, state) the server assigns. */
const inputFields = ["content", "type", "containers", "tags", "source", "validFrom", "validUntil", "metadata", "confidence", "severity"];
const pageSize = 200;
const maxBatch = 100;

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const key = process.env.AGENTMEM_API_KEY;
  if (!key) throw new CliError("AGENTMEM_API_KEY is not set");
  const res = await fetchServer(path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = { error: { message: text.slice(0, 500) } };
  }
  return { status: res.status, json };
}

function listQuery(values: Record<string, string | string[] | boolean | undefined>): URLSearchParams {
  const query = new URLSearchParams();
  for (const c of (values.container as string[] | undefined) ?? []) query.append("containers", c);
  for (const t of (values.type as string[] | undefined) ?? []) query.append("types", t);
  for (const t of (values.tag as string[] | undefined) ?? []) query.append("tags", t);
  if (values.state) query.set("state", values.state as string);
  if (values["created-after"]) query.set("createdAfter", values["created-after"] as string);
  if (values["created-before"]) query.set("createdBefore", values["created-before"] as string);
  if (values.metadata) query.set("metadata", values.metadata as string);
  return query;
}

/** Every page of a listing in turn, each fetched when the previous one has been consumed. */
async function* pages(query: URLSearchParams, size: number): AsyncGenerator<Array<Record<string, unknown>>> {
  let token: string | undefined;
  do {
    const q = new URLSearchParams(query);
    q.set("pageSize", String(size));
    if (token) q.set("pageToken", token);
    const { status, json } = await call("GET", `/api/v1/agent/memories?${q}`);
    if (status !== 200) throw new CliError(JSON.stringify(json));
    yield json.memories;
    token = json.nextPageToken;
  } while (token);
}

async function writeLine(out: NodeJS.WritableStream, line: string): Promise<void> {
  if (!out.write(line + "\n")) await once(out, "drain");
}

async function list(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { ...filterOptions, limit: { type: "string" } } });
  const limit = Number(values.limit ?? 50);
  if (!Number.isInteger(limit) || limit < 1) throw new CliError("--limit must be a positive integer");
  let printed = 0;
  for await (const page of pages(listQuery(values), Math.min(limit, pageSize))) {
    for (const memory of page.slice(0, limit - printed)) await writeLine(process.stdout, JSON.stringify(memory));
    printed += Math.min(page.length, limit - printed);
    if (printed >= limit) break;
  }
  return 0;
}

async function exportMemories(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { ...filterOptions, out: { type: "string" } } });
  const out: NodeJS.WritableStream = values.out ? createWriteStream(values.out) : process.stdout;
  // The total is unknown until the last page: the bar counts up, on stderr, only for a person watching.
  const bar = process.stderr.isTTY ? new SingleBar({ format: "exporting {value} memories", stream: process.stderr }) : null;
  bar?.start(0, 0);
  let exported = 0;
  try {
    for await (const page of pages(listQuery(values), pageSize)) {
      for (const memory of page) await writeLine(out, JSON.stringify(memory));
      exported += page.length;
      bar?.update(exported);
    }
  } finally {
    bar?.stop();
    if (values.out) {
      (out as WriteStream).end();
      await once(out, "close");
    }
  }
  if (values.out) console.error(JSON.stringify({ exported, out: values.out }));
  return 0;
}

interface Checkpoint {
  /** Size and modification time of the file: a checkpoint of another file (or an edited one) is not resumed. */
  size: number;
  /** Lines (1-based) done: every line up to it is stored. */
  line: number;
}

/** A line of the file as a create request's memory, or a reason to skip it. */
function memoryOfLine(text: string, line: number, includeShadowed: boolean): Record<string, unknown> | "blank" | "shadowed" {
  if (text.trim() === "") return "blank";
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError(`line ${line}: not valid JSON`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new CliError(`line ${line}: not a JSON object`);
  const record = json as Record<string, unknown>;
  if (record.state === "shadowed" && !includeShadowed) return "shadowed";
  return Object.fromEntries(inputFields.filter((f) => record[f] !== undefined && record[f] !== null).map((f) => [f, record[f]]));
}

async function countLines(file: string): Promise<number> {
  let lines = 0;
  for await (const _ of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) lines++;
  return lines;
}

async function importMemories(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { "batch-size": { type: "string" }, "include-shadowed": { type: "boolean" } },
  });
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new CliError("usage: agentmem memories import <file.jsonl>");
  const batchSize = Number(values["batch-size"] ?? maxBatch);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > maxBatch) throw new CliError(`--batch-size must be 1 to ${maxBatch}`);
  const checkpointFile = `${file}.checkpoint`;
  const { size } = await stat(file).catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read ${file}: ${err.code === "ENOENT" ? "no such file" : err.message}`);
  });
  const saved = await readFile(checkpointFile, "utf8").then((t) => JSON.parse(t) as Checkpoint, () => null);
  const resumeAfter = saved && saved.size === size ? saved.line : 0;
  const total = await countLines(file);
  const bar = process.stderr.isTTY ? new SingleBar({ format: "importing [{bar}] {value}/{total} lines, {eta_formatted} left", stream: process.stderr }) : null;
  bar?.start(total, resumeAfter);

  const summary = { lines: total, resumedAfterLine: resumeAfter, imported: 0, duplicates: 0, skippedShadowed: 0 };
  let batch: Array<{ line: number; memory: Record<string, unknown> }> = [];
  let lastLine = resumeAfter;
  const flush = async (upTo: number) => {
    if (batch.length > 0) {
      // The key names the batch by its lines and contents: a re-run after a failure whose batch was stored
      // anyway (the answer lost) gets that batch's first answer back instead of storing it twice.
      const digest = createHash("sha256").update(JSON.stringify(batch)).digest("hex");
      const { status, json } = await call("POST", "/api/v1/agent/memories", { memories: batch.map((b) => b.memory) }, { "idempotency-key": `agentmem-import-${digest}` });
      if (status !== 200) {
        const field: string | undefined = json?.error?.details?.field;
        const index = field?.match(/^memories\[(\d+)\]/)?.[1];
        const where = index === undefined ? `lines ${batch[0]!.line}-${batch.at(-1)!.line}` : `line ${batch[Number(index)]!.line}`;
        throw new CliError(`${where}: ${JSON.stringify(json)}\nfix it and run the same command again: it resumes after line ${lastLine}`);
      }
      for (const result of json.results as Array<{ duplicateOf?: string }>) result.duplicateOf ? summary.duplicates++ : summary.imported++;
    }
    batch = [];
    bar?.update(upTo);
    lastLine = upTo;
    await writeFile(checkpointFile, JSON.stringify({ size, line: upTo } satisfies Checkpoint));
  };
  try {
    let line = 0;
    for await (const text of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
      if (++line <= resumeAfter) continue;
      const memory = memoryOfLine(text, line, values["include-shadowed"] ?? false);
      if (memory === "shadowed") summary.skippedShadowed++;
      else if (memory !== "blank") batch.push({ line, memory });
      if (batch.length === batchSize) await flush(line);
    }
    await flush(line);
  } finally {
    bar?.stop();
  }
  await rm(checkpointFile, { force: true });
  console.log(JSON.stringify(summary));
  return 0;
}

/** Runs `agentmem memories <command> ...`; resolves to the process exit code. */
export async function memoriesCommand(command: string | undefined, args: string[]): Promise<number> {
  if (command === "list") return await list(args);
  if (command === "export") return await exportMemories(args);
  if (command === "import") return await importMemories(args);
  console.error(`usage:\n${memoriesUsage}`);
  return 2;
}
