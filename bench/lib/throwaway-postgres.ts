import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

// A throwaway PostgreSQL cluster from the installed server binaries, for benches run without
// --database-url (the same settings as the test cluster: fsync off, loopback only).

function serverBinDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, "bin", "initdb"))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error("PostgreSQL server binaries not found: install postgresql, or pass --database-url");
  return path.join(root, newest, "bin");
}

function runPg(bin: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const [cmd, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  const result = spawnSync(cmd, argv, { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${path.basename(bin)} failed: ${result.stderr || result.stdout}`);
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

/** Starts a cluster; returns its admin URL and a stop function that removes it. */
export async function throwawayPostgres(): Promise<{ url: string; stop(): void }> {
  const bin = serverBinDir();
  const dir = mkdtempSync(path.join(os.tmpdir(), "agentmem-bench-pg-"));
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
    "-o", `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`,
  ]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      runPg(path.join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "stop"]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
