import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
// A loaded machine (load average 30 on 2 cores, other benches running) took over a minute to start one.
const readyTimeoutMs = 180_000;
const stopTimeoutMs = 10_000;

/**
 * What `npm start` runs (`sh src/start.sh`), so a bench server allocates as a deployed one does: the script
 * chooses the allocator and its settings, each only when the environment has none, and execs node.
 */
export const startScript = "src/start.sh";

export interface BenchServer {
  url: string;
  /** The server process, e.g. to read its memory use from /proc/<pid>/status. */
  pid: number;
  /** Creates an agent API key through the admin REST API and returns its secret. */
  createKey(workspace: string, container: string): Promise<string>;
  /** Stops the server (SIGTERM, then SIGKILL) and removes its data directory. */
  stop(): Promise<void>;
}

/**
 * Starts the server as `npm start` does (its script execs node: the child's pid is the server's) on a free
 * loopback port with a fresh data directory, so the bench measures the real server in its own process, as
 * deployed. Uses embedded PGlite storage unless `databaseUrl` is given, with npm start's allocator and
 * settings unless the environment has its own (`LD_PRELOAD=` for glibc's). `env` adds to or overrides the
 * server's environment.
 */
export async function startServer(databaseUrl: string | undefined, env: Record<string, string> = {}): Promise<BenchServer> {
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(tmpdir(), "agentmem-bench-"));
  const adminKey = `bench-admin-${randomBytes(16).toString("hex")}`;
  const child = spawn("sh", [startScript], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      // Empty means unset to the server, which then uses PGlite in DATA_DIR.
      DATABASE_URL: databaseUrl ?? "",
      AGENTMEM_ADMIN_KEY: adminKey,
      LOG_LEVEL: "warn",
      // Benchmarks measure the service, not a plan: no rate limits unless a bench asks (the default plan has no caps).
      RATE_LIMIT_STORE: "off",
      ...env,
    },
    // The server's logs go to our stderr so stdout carries only the results.
    stdio: ["ignore", process.stderr, process.stderr],
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopChild(child);
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await waitUntilReady(url, child);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, pid: child.pid!, stop, createKey: (workspace, container) => createKey(url, adminKey, workspace, container) };
}

async function freePort(): Promise<number> {
  const probe = net.createServer().listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function waitUntilReady(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with code ${child.exitCode} before it was ready`);
    const status = await fetch(`${url}/readyz`).then(
      (res) => res.status,
      () => 0, // not listening yet
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`server not ready after ${readyTimeoutMs / 1000} s`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), stopTimeoutMs);
  await exited;
  clearTimeout(timer);
}

async function createKey(url: string, adminKey: string, workspace: string, container: string): Promise<string> {
  const res = await fetch(`${url}/api/v1/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    body: JSON.stringify({ workspace, container }),
  });
  if (!res.ok) throw new Error(`creating an API key failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { key: string }).key;
}
