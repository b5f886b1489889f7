// Whether a pathological request stalls the server's event loop: while a second process pings GET /healthz
// every 10 ms, each input below is sent in turn and answered, and the pings' latencies during it are kept.
//
//   npx tsx bench/stall.ts [--backends pglite,postgres] [--cases skill-keys-1000,auth-tab,…] [--parallel 4]
//                          [--ping-interval 10] [--request-timeout 120] [--timeout 1800] [--database-url postgres://…]
//
// The server is started as bench/lib/server.ts starts it (sh src/start.sh in a child process, PGlite in a fresh
// data directory, or with --backends postgres a scratch database on a throwaway PostgreSQL cluster or on
// --database-url's server); an agent key for workspace "bench", container "stall" comes from the admin API.
// The pinger (bench/lib/healthz-pinger.mjs) is its own node process, so its timers do not wait for the
// server's or for this one's: it sends a ping on every tick whether or not the last has answered (open
// loop), and a stall shows as a run of slow pings. Cases run one after the other, each after the pings of
// the last have answered and 300 ms of quiet; a case is the request sent once, or --parallel copies of it at
// once (skill names differ between copies), timed until every copy has answered. For each case: the answers'
// statuses, the time to the last answer, and the pings that were in flight at any moment of it (sent before
// the last answer, answered after the first request was sent): how many, the worst, p99, and how many took
// over 100 ms. "idle" is 2 s with no request, the pinger's own floor. Before the first case, one ordinary
// skill import and one ordinary memory create are sent, untimed, so first-use costs (the model's first
// embedding, the index's first table) are not charged to a case. A server that exits during a case is
// reported and started again for the next one.
//
// Cases (--cases takes any of the names; default all):
//   idle                      no request for 2 s
//   skill-plain               an ordinary SKILL.md (name, description, license, two metadata keys): the floor of an import
//   skill-keys-1000/4000/6500 POST /api/v1/agent/skills/import, frontmatter with that many top-level `k<j>: v` keys
//   skill-metadata-4000       4,000 keys under `metadata:`
//   skill-nested-30000        `x: [[[…]]]` nested 30,000 deep
//   skill-scalar-60k          a 60 KiB plain scalar (no spaces)
//   skill-aliases-500         one anchor and 500 aliases of it
//   memory-plain              one ordinary one-sentence memory: the floor of a create
//   memory-batch-100x16k      POST /api/v1/agent/memories, 100 memories of 16,383 characters of sentences
//   memory-nospace-16383      one memory of 16,383 characters without a space
//   console-dotdot            GET /console/../../etc/passwd, the raw path, not normalised by the client
//   console-nul               GET /console/a%00b
//   auth-two-spaces           GET /api/v1/agent/memories with `Authorization: Bearer  <key>` (two spaces)
//   auth-tab                  the same with `Bearer<TAB><key>`
//
// Prints a table per backend and writes bench/results/stall.json (stall-parallel<N>.json with --parallel N): the
// CPU model, cores, load averages, date, commit and command, and every case's numbers.

import { execFileSync, fork, type ChildProcess } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import http from "node:http";
import { availableParallelism, cpus, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { onCleanUp, positiveOption, runBench, stopAfter } from "./lib/run.js";
import { benchDatabase } from "./lib/scratch-database.js";
import { startServer, type BenchServer } from "./lib/server.js";
import { syntheticMemory } from "./lib/synthetic.js";
import { alignedTable } from "./lib/table.js";

type Backend = "pglite" | "postgres";

interface RawRequest {
  method: "GET" | "POST";
  /** Sent as is: http.request does not normalise it. */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

interface Case {
  name: string;
  /** The request, given the agent key and a number that differs between copies and runs. */
  request?: (key: string, n: number) => RawRequest;
  /** For "idle": how long to wait instead of sending a request. */
  idleMs?: number;
}

interface CaseResult {
  backend: Backend;
  case: string;
  parallel: number;
  statuses: string[];
  /** Body of the first answer, cut short, to tell a refusal from an acceptance. */
  firstAnswer: string;
  ms: number;
  requestBytes: number;
  pings: number;
  worstPingMs: number;
  p99PingMs: number;
  p50PingMs: number;
  pingsOver100Ms: number;
  failedPings: number;
  serverExited: boolean;
}

const container = "stall";
const memoryChars = 16_383;

const json = (key: string, apiPath: string, body: unknown): RawRequest => ({
  method: "POST",
  path: apiPath,
  headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  body: JSON.stringify(body),
});

/** A SKILL.md whose frontmatter has the spec's two required keys, then `extra` lines. */
const skillMd = (n: number, extra: string) =>
  `---\nname: stall-${n}\ndescription: A skill whose frontmatter is built to be expensive to parse.\n${extra}\n---\n# Stall\n\nBody.\n`;
const skill = (extra: () => string) => {
  let memo: string | undefined;
  return (key: string, n: number) => json(key, "/api/v1/agent/skills/import", { content: skillMd(n, (memo ??= extra())), containers: [container] });
};
const lines = (count: number, line: (j: number) => string) => Array.from({ length: count }, (_, j) => line(j)).join("\n");

/** Sentences from the synthetic corpus, with spaces, cut to `chars`. */
function sentences(seed: number, chars: number): string {
  let text = "";
  for (let i = 0; text.length < chars; i++) text += syntheticMemory(i, seed) + " ";
  return text.slice(0, chars - 1) + ".";
}

/** Letters and digits without a space, like a pasted token or blob (deterministic). */
function noSpaces(chars: number): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  let x = 2463534242;
  let s = "";
  for (let i = 0; i < chars; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    s += alphabet[(x >>> 0) % alphabet.length];
  }
  return s;
}

const listWith = (authorization: string): RawRequest => ({ method: "GET", path: "/api/v1/agent/memories?pageSize=10", headers: { authorization } });

const cases: Case[] = [
  { name: "idle", idleMs: 2000 },
  { name: "skill-plain", request: skill(() => "license: MIT\nmetadata:\n  owner: platform\n  version: \"1.2\"") },
  { name: "skill-keys-1000", request: skill(() => lines(1000, (j) => `k${j}: v`)) },
  { name: "skill-keys-4000", request: skill(() => lines(4000, (j) => `k${j}: v`)) },
  { name: "skill-keys-6500", request: skill(() => lines(6500, (j) => `k${j}: v`)) },
  { name: "skill-metadata-4000", request: skill(() => "metadata:\n" + lines(4000, (j) => `  k${j}: v`)) },
  { name: "skill-nested-30000", request: skill(() => `x: ${"[".repeat(30_000)}${"]".repeat(30_000)}`) },
  { name: "skill-scalar-60k", request: skill(() => `x: ${"a".repeat(60 * 1024)}`) },
  { name: "skill-aliases-500", request: skill(() => "anchor: &a [v, v, v]\n" + lines(500, (j) => `a${j}: *a`)) },
  { name: "memory-plain", request: (key, n) => json(key, "/api/v1/agent/memories", { content: `${syntheticMemory(n, 3)} (${n})`, type: "fact", containers: [container] }) },
  {
    name: "memory-batch-100x16k",
    request: (() => {
      let memo: string[] | undefined;
      return (key: string, n: number) => {
        memo ??= Array.from({ length: 100 }, (_, i) => sentences(i + 1, memoryChars));
        // A copy-specific prefix, so parallel copies and repeated runs are new memories, not duplicates.
        return json(key, "/api/v1/agent/memories", {
          memories: memo.map((content, i) => ({ content: `[${n}.${i}] ${content}`.slice(0, memoryChars), type: "fact", containers: [container] })),
        });
      };
    })(),
  },
  {
    name: "memory-nospace-16383",
    request: (key, n) => json(key, "/api/v1/agent/memories", { content: `${n}${noSpaces(memoryChars)}`.slice(0, memoryChars), type: "fact", containers: [container] }),
  },
  { name: "console-dotdot", request: () => ({ method: "GET", path: "/console/../../etc/passwd", headers: {} }) },
  { name: "console-nul", request: () => ({ method: "GET", path: "/console/a%00b", headers: {} }) },
  { name: "auth-two-spaces", request: (key) => listWith(`Bearer  ${key}`) },
  { name: "auth-tab", request: (key) => listWith(`Bearer\t${key}`) },
];

interface Options {
  backends: Backend[];
  cases: Case[];
  parallel: number;
  pingIntervalMs: number;
  requestTimeoutS: number;
  timeoutS: number;
  databaseUrl: string | undefined;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      backends: { type: "string", default: "pglite" },
      cases: { type: "string", default: cases.map((c) => c.name).join(",") },
      parallel: { type: "string", default: "1" },
      "ping-interval": { type: "string", default: "10" },
      "request-timeout": { type: "string", default: "120" },
      timeout: { type: "string", default: "1800" },
      "database-url": { type: "string" },
    },
  });
  const backends = values.backends.split(",").map((b) => b.trim());
  for (const b of backends) if (b !== "postgres" && b !== "pglite") throw new Error(`--backends: unknown backend "${b}"`);
  const chosen = values.cases.split(",").map((name) => {
    const c = cases.find((k) => k.name === name.trim());
    if (!c) throw new Error(`--cases: unknown case "${name}"; known: ${cases.map((k) => k.name).join(", ")}`);
    return c;
  });
  return {
    backends: backends as Backend[],
    cases: chosen,
    parallel: positiveOption("parallel", values.parallel),
    pingIntervalMs: positiveOption("ping-interval", values["ping-interval"]),
    requestTimeoutS: positiveOption("request-timeout", values["request-timeout"]),
    timeoutS: positiveOption("timeout", values.timeout),
    databaseUrl: values["database-url"],
  };
}

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The pinger child and the pings it has reported: [sentAt, latencyMs, status]. */
class Pinger {
  readonly pings: Array<[number, number, number]> = [];
  private barriers = new Map<number, () => void>();
  private nextBarrier = 0;
  private constructor(private readonly child: ChildProcess) {
    child.on("message", (msg: unknown) => {
      if (Array.isArray(msg)) this.pings.push(msg as [number, number, number]);
      else if (msg && typeof msg === "object" && (msg as { type?: string }).type === "barrier") {
        const id = (msg as { id: number }).id;
        this.barriers.get(id)?.();
        this.barriers.delete(id);
      }
    });
  }

  static start(url: string, intervalMs: number): Pinger {
    const script = fileURLToPath(new URL("lib/healthz-pinger.mjs", import.meta.url));
    // Plain node, without this process's tsx loader.
    const child = fork(script, [url, String(intervalMs)], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
    return new Pinger(child);
  }

  /** Resolves once every ping sent at or before `at` has answered or timed out. */
  until(at: number): Promise<void> {
    const id = this.nextBarrier++;
    return new Promise((resolve) => {
      this.barriers.set(id, resolve);
      this.child.send({ type: "barrier", id, at });
    });
  }

  /** The pings in flight at any moment of [from, to]. */
  during(from: number, to: number): Array<[number, number, number]> {
    return this.pings.filter(([sentAt, ms]) => sentAt <= to && sentAt + ms >= from);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || !this.child.connected) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.send({ type: "stop" });
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }
}

/** Sends one raw request and waits for the whole answer; the status, or the error's code. */
function send(baseUrl: string, req: RawRequest, timeoutMs: number): Promise<{ status: string; body: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    const r = http.request(
      { host: url.hostname, port: url.port, method: req.method, path: req.path, headers: { ...req.headers, ...(req.body ? { "content-length": String(Buffer.byteLength(req.body)) } : {}) }, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: String(res.statusCode), body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", (err: NodeJS.ErrnoException) => resolve({ status: `error ${err.code ?? err.message}`, body: "" }));
      },
    );
    r.on("timeout", () => r.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
    r.on("error", (err: NodeJS.ErrnoException) => resolve({ status: `error ${err.code ?? err.message}`, body: "" }));
    r.end(req.body);
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const quantile = (sorted: number[], q: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!);

interface Running {
  server: BenchServer;
  key: string;
  pinger: Pinger;
}

async function startAll(databaseUrl: string | undefined, pingIntervalMs: number): Promise<Running> {
  const server = await startServer(databaseUrl);
  const key = await server.createKey("bench", container);
  // Warm-up, untimed: the first import and create pay for first use (model, index tables).
  const warm = cases.filter((c) => c.name === "skill-plain" || c.name === "memory-plain");
  for (const c of warm) {
    const answer = await send(server.url, c.request!(key, 0), 120_000);
    if (answer.status !== "200") console.error(`warm-up ${c.name}: ${answer.status} ${answer.body.slice(0, 200)}`);
  }
  const pinger = Pinger.start(server.url, pingIntervalMs);
  await sleep(500); // the pinger's first connections
  return { server, key, pinger };
}

async function runBackend(backend: Backend, options: Options, counter: { n: number }): Promise<CaseResult[]> {
  const databaseUrl = backend === "postgres" ? await benchDatabase(options.databaseUrl) : undefined;
  console.error(`[${backend}] starting the server…`);
  let running = await startAll(databaseUrl, options.pingIntervalMs);
  const stopRunning = async (r: Running) => {
    await r.pinger.stop();
    await r.server.stop();
  };
  let current = running;
  onCleanUp(() => stopRunning(current));
  const results: CaseResult[] = [];
  for (const c of options.cases) {
    await running.pinger.until(now());
    await sleep(300);
    const copies = c.request ? options.parallel : 1;
    const requests = c.request ? Array.from({ length: copies }, () => c.request!(running.key, counter.n++)) : [];
    const requestBytes = requests[0]?.body ? Buffer.byteLength(requests[0].body) : 0;
    const from = now();
    const answers = c.request
      ? await Promise.all(requests.map((r) => send(running.server.url, r, options.requestTimeoutS * 1000)))
      : await sleep(c.idleMs ?? 0).then(() => []);
    const to = now();
    const exited = !alive(running.server.pid);
    if (!exited) await running.pinger.until(to);
    else await sleep(200);
    const pings = running.pinger.during(from, to);
    const latencies = pings.map(([, ms]) => ms).sort((a, b) => a - b);
    const result: CaseResult = {
      backend,
      case: c.name,
      parallel: copies,
      statuses: answers.map((a) => a.status),
      firstAnswer: (answers[0]?.body ?? "").slice(0, 200),
      ms: to - from,
      requestBytes,
      pings: pings.length,
      worstPingMs: latencies.at(-1) ?? NaN,
      p99PingMs: quantile(latencies, 0.99),
      p50PingMs: quantile(latencies, 0.5),
      pingsOver100Ms: latencies.filter((ms) => ms > 100).length,
      failedPings: pings.filter(([, , status]) => status !== 200).length,
      serverExited: exited,
    };
    results.push(result);
    console.error(
      `[${backend}] ${c.name}: ${statusCell(result)} in ${result.ms.toFixed(0)} ms; pings ${result.pings}, worst ${result.worstPingMs.toFixed(1)} ms, >100 ms ${result.pingsOver100Ms}${exited ? "; SERVER EXITED" : ""}`,
    );
    if (exited) {
      console.error(`[${backend}] the server exited during ${c.name}; starting another`);
      await stopRunning(running);
      running = await startAll(databaseUrl, options.pingIntervalMs);
      current = running;
    }
  }
  await stopRunning(running);
  return results;
}

/** "200", or "4×413" for copies with one status, or the statuses in order. */
function statusCell(r: CaseResult): string {
  if (r.statuses.length === 0) return "-";
  const distinct = [...new Set(r.statuses)];
  if (distinct.length === 1) return r.statuses.length === 1 ? distinct[0]! : `${r.statuses.length}×${distinct[0]}`;
  return r.statuses.join(",");
}

const ms = (v: number) => (Number.isNaN(v) ? "-" : v.toFixed(1));
const kib = (bytes: number) => (bytes === 0 ? "-" : (bytes / 1024).toFixed(0));

function report(results: CaseResult[], backend: Backend): string {
  const rows = [
    ["case", "req KiB", "status", "ms", "pings", "worst ping ms", "p99 ping ms", "p50 ping ms", "pings >100 ms", "failed pings"],
    ...results
      .filter((r) => r.backend === backend)
      .map((r) => [
        r.case + (r.serverExited ? " (server exited)" : ""),
        kib(r.requestBytes),
        statusCell(r),
        r.ms.toFixed(0),
        String(r.pings),
        ms(r.worstPingMs),
        ms(r.p99PingMs),
        ms(r.p50PingMs),
        String(r.pingsOver100Ms),
        String(r.failedPings),
      ]),
  ];
  return alignedTable(rows, [0, 2]);
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  stopAfter(options.timeoutS);
  const repoRoot = fileURLToPath(new URL("..", import.meta.url));
  const commit = execFileSync("git", ["-C", repoRoot, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
  const dirty = execFileSync("git", ["-C", repoRoot, "status", "--porcelain", "--untracked-files=no"], { encoding: "utf8" }).trim() !== "";
  const run = {
    command: `npx tsx bench/stall.ts ${process.argv.slice(2).join(" ")}`.trim(),
    commit: commit + (dirty ? " (with uncommitted changes)" : ""),
    date: new Date().toISOString(),
    cpu: cpus()[0]?.model ?? "unknown",
    cores: availableParallelism(),
    node: process.version,
    loadAvgBefore: loadavg(),
    parallel: options.parallel,
    pingIntervalMs: options.pingIntervalMs,
  };
  const counter = { n: Date.now() % 1_000_000 };
  const results: CaseResult[] = [];
  for (const backend of options.backends) results.push(...(await runBackend(backend, options, counter)));
  const loadAvgAfter = loadavg();
  const fmtLoad = (l: number[]) => l.map((x) => x.toFixed(2)).join(" ");
  console.log(`commit ${run.commit}   ${run.date}`);
  console.log(`cpu: ${run.cpu} × ${run.cores}   node ${run.node}   load average before: ${fmtLoad(run.loadAvgBefore)}   after: ${fmtLoad(loadAvgAfter)}`);
  console.log(`GET /healthz every ${options.pingIntervalMs} ms from a second process; each case sent ${options.parallel === 1 ? "once" : `${options.parallel} at once`}`);
  for (const backend of options.backends) console.log(`\n${backend}\n${report(results, backend)}`);
  const file = fileURLToPath(new URL(`results/stall${options.parallel === 1 ? "" : `-parallel${options.parallel}`}.json`, import.meta.url));
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ run: { ...run, loadAvgAfter }, results }, null, 2) + "\n");
  console.log(`\nwritten to ${file}`);
  return 0;
}

runBench(main);
