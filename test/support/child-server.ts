import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

export interface ChildServer {
  url: string;
  child: ChildProcess;
}

/**
 * Starts `src/main.ts` (or `command`, which runs it) in a child process and resolves once it logs that it
 * listens: no polling budget that a loaded machine can outlast. Rejects, with what the server wrote to
 * stderr, if it exits first.
 */
export function spawnServer(env: Record<string, string | undefined>, command: readonly string[] = [process.execPath, "--import", "tsx", "src/main.ts"]): Promise<ChildServer> {
  const child = spawn(command[0]!, command.slice(1), {
    env: { ...process.env, LOG_LEVEL: "info", REQUEST_LOG_LEVEL: "silent", LOG_FORMAT: "json", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once("exit", (code, signal) => reject(new Error(`the server exited (${code ?? signal}) before listening: ${stderr}`)));
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      const url = /agentmem listening on (\S+)/.exec(line)?.[1];
      if (url === undefined) return;
      lines.close();
      // The rest of its output is not read: drain it so the child never blocks on a full pipe.
      child.stdout!.resume();
      resolve({ url, child });
    });
  });
}

/**
 * A server in a child process on `dataDir` without its indexer (what it commits stays queued), with an
 * agent key of acme/agent-1: to kill it (SIGKILL) and check what the next start finds.
 */
export async function spawnUnindexedServer(dataDir: string, adminKey: string): Promise<ChildServer & { key: string }> {
  const server = await spawnServer({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, AGENTMEM_ADMIN_KEY: adminKey, INDEXER_ENABLED: "false" });
  const keyRes = await fetch(`${server.url}/api/v1/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    body: JSON.stringify({ workspace: "acme", container: "agent-1" }),
  });
  const { key } = (await keyRes.json()) as { key: string };
  return { ...server, key };
}

/** Kills a child server as a crash would, and waits until it has exited. */
export async function killHard(child: ChildProcess): Promise<void> {
  child.kill("SIGKILL");
  await new Promise((resolve) => child.once("exit", resolve));
}
