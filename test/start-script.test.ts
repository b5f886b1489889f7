import { execFile } from "node:child_process";
import { once } from "node:events";
import { promisify } from "node:util";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { startScript } from "../bench/lib/server.js";
import { spawnServer, type ChildServer } from "./support/child-server.js";

// Where src/start.sh looks for jemalloc, in its order.
const jemallocPaths = [`/usr/lib/${os.machine()}-linux-gnu/libjemalloc.so.2`, "/usr/lib64/libjemalloc.so.2", "/usr/lib/libjemalloc.so.2"];

/** The environment and the mapped libraries of a running process. */
function processOf(pid: number): { env: Map<string, string>; maps: string } {
  const env = new Map<string, string>();
  for (const entry of readFileSync(`/proc/${pid}/environ`, "latin1").split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) env.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return { env, maps: readFileSync(`/proc/${pid}/maps`, "latin1") };
}

describe("npm start (src/start.sh)", () => {
  let server: ChildServer | undefined;
  // Stopped as an operator stops it: a killed server would leave its in-memory index's directory behind.
  afterEach(async () => {
    if (!server) return;
    const exited = once(server.child, "exit");
    server.child.kill("SIGTERM");
    await exited;
    server = undefined;
  });
  const start = async (env: Record<string, string | undefined>) => {
    const base = { PORT: "0", HOST: "127.0.0.1", DATA_DIR: "memory://", AGENTMEM_ADMIN_KEY: "k".repeat(32) };
    // Unset whatever this test process inherited: each case sets what it tests.
    const unset = { LD_PRELOAD: undefined, MALLOC_CONF: undefined, MALLOC_ARENA_MAX: undefined };
    server = await spawnServer({ ...unset, ...base, ...env }, ["sh", startScript]);
    return processOf(server.child.pid!);
  };

  it("is what the benchmarks' servers run", () => {
    const scripts = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { scripts: { start: string } }).scripts;
    // exec: npm's shell becomes the server, so a signal npm forwards reaches it.
    expect(scripts.start).toBe(`exec sh ${startScript}`);
  });

  it("runs npm without configuration warnings (the offline install's script policy is package.json's allowScripts)", async () => {
    const { stderr } = await promisify(execFile)("npm", ["pkg", "get", "name"], { cwd: new URL("..", import.meta.url).pathname });
    expect(stderr).toBe("");
  });

  it.each(["SIGTERM", "SIGINT"] as const)("stops when npm start's own process gets %s, leaving nothing serving", async (signal) => {
    const npm = await spawnServer({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: "memory://", AGENTMEM_ADMIN_KEY: "k".repeat(32) }, ["npm", "start", "--silent"]);
    expect((await fetch(`${npm.url}/healthz`)).status).toBe(200);
    const exited = once(npm.child, "exit");
    npm.child.kill(signal);
    await exited;
    // Whatever ran under npm has exited with it: the port refuses connections.
    await expect(fetch(`${npm.url}/healthz`)).rejects.toThrow();
  });

  it("execs the server under jemalloc when the system has it, with settings that return freed memory, and glibc's settings otherwise", async () => {
    const jemalloc = jemallocPaths.find((p) => existsSync(p));
    const { env, maps } = await start({});
    // The script execs node: the process that listens is the one started.
    expect(maps).toContain("/node");
    expect(maps.includes("libjemalloc.so.2")).toBe(jemalloc !== undefined);
    expect(env.get("LD_PRELOAD")).toBe(jemalloc);
    expect(env.get("MALLOC_CONF")).toBe("background_thread:true,narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0,oversize_threshold:131072");
    expect(env.get("MALLOC_ARENA_MAX")).toBe("2");
  });

  it("leaves the operator's choices: an empty LD_PRELOAD keeps glibc, and set values stand", async () => {
    const { env, maps } = await start({ LD_PRELOAD: "", MALLOC_CONF: "narenas:1", MALLOC_ARENA_MAX: "4" });
    expect(maps).not.toContain("libjemalloc");
    expect(env.get("LD_PRELOAD")).toBe("");
    expect(env.get("MALLOC_CONF")).toBe("narenas:1");
    expect(env.get("MALLOC_ARENA_MAX")).toBe("4");
  });
});
