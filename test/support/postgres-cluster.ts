import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

// Tests run against a real PostgreSQL server: TEST_DATABASE_URL when set, otherwise a throwaway
// cluster started here from the installed server binaries (Debian's postgresql package). Benchmarks
// run without --database-url start one the same way.

function serverBinDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, "bin", "initdb"))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) {
    throw new Error("PostgreSQL server binaries not found: apt-get install postgresql, or set TEST_DATABASE_URL (benchmarks: --database-url)");
  }
  return path.join(root, newest, "bin");
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.on("error", reject);
  });
}

/** Runs a server binary, as the postgres user when we are root (PostgreSQL refuses to run as root). */
function runPg(bin: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const [cmd, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  const result = spawnSync(cmd, argv, { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${path.basename(bin)} failed: ${result.stderr || result.stdout}`);
}

/** Starts a cluster (fsync off, loopback only); returns its admin URL and a stop function that removes it. */
export async function throwawayPostgres(settings = ""): Promise<{ url: string; stop(): void }> {
  const bin = serverBinDir();
  const dir = mkdtempSync(path.join(os.tmpdir(), "agentmem-pg-"));
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }));
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }));
    chownSync(dir, uid, gid);
  }
  const data = path.join(dir, "data");
  const port = await freePort();
  runPg(path.join(bin, "initdb"), ["--no-sync", "-U", "postgres", "--auth=trust", "-E", "UTF8", "-D", data]);
  runPg(path.join(bin, "pg_ctl"), [
    "-D", data, "-l", path.join(dir, "server.log"), "-w", "start",
    "-o", `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off ${settings}`,
  ]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      runPg(path.join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "stop"]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The run's PostgreSQL server and its scratch directory: every temporary directory of the run (the tests',
 * their servers' and those servers' children's) is made under it, as TMPDIR. An interrupted run (SIGINT,
 * SIGTERM, SIGHUP: Ctrl-C, a supervisor, a CI timeout) stops the server and removes the scratch directory
 * before it exits, as a finished run does.
 */
export default async function setup(project: TestProject) {
  const given = process.env.TEST_DATABASE_URL;
  const cluster = given ? undefined : await throwawayPostgres("-c max_connections=300");
  project.provide("postgresUrl", given || cluster!.url);
  // Made after the cluster, whose directory the postgres user must reach.
  const scratch = mkdtempSync(path.join(os.tmpdir(), "agentmem-test-"));
  // Searchable by others, so the postgres user reaches a cluster made in it (a run started by a test).
  chmodSync(scratch, 0o755);
  process.env.TMPDIR = scratch;
  let cleaned = false;
  const cleanUp = () => {
    if (cleaned) return;
    cleaned = true;
    try {
      cluster?.stop();
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  const onSignal = (signal: NodeJS.Signals) => {
    cleanUp();
    for (const s of signals) process.removeListener(s, onSignal);
    process.kill(process.pid, signal);
  };
  for (const signal of signals) process.on(signal, onSignal);
  process.once("exit", cleanUp);
  return cleanUp;
}
