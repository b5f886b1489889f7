import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/test-server.js";

const run = promisify(execFile);

/** The environment of a fresh shell: no admin key, no server URL. */
function freshEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.AGENTMEM_ADMIN_KEY;
  delete env.AGENTMEM_URL;
  return { ...env, ...extra };
}

function cli(args: string[], env: Record<string, string>) {
  return run(process.execPath, ["src/cli/agentmem.mjs", ...args], { env: freshEnv(env), timeout: 30_000 });
}

type Failure = { code: number; stdout: string; stderr: string };
const failure = (promise: Promise<unknown>) => promise.then(() => expect.unreachable("exit code 0"), (err: Failure) => err);

/** One line and no stack trace ("    at …"). */
function expectOneLine(text: string): void {
  expect(text.trim().split("\n")).toHaveLength(1);
  expect(text).not.toMatch(/^\s+at /m);
}

describe("the first run: npm start, agentmem wait, and mistakes in one line", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("pglite");
  });
  afterAll(() => server?.close());

  it("starts without AGENTMEM_ADMIN_KEY saying how to create the first key; a taken port is one line, before storage loads", async () => {
    const { port } = new URL(server.url);
    const second = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: freshEnv({ HOST: "127.0.0.1", PORT: port, DATA_DIR: "memory://" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    second.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    second.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const [code] = (await once(second, "exit")) as [number];
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ level: 40, msg: expect.stringContaining("npx agentmem keys create --workspace <name> --container <name>") });
    expect(stderr).toContain(`cannot listen on 127.0.0.1:${port}: the port is in use`);
    expectOneLine(stderr);

    // AGENTMEM_URL is unset: the CLI finds the server from PORT, as `npm start` does.
    const ready = await cli(["wait", "--timeout", "60"], { PORT: port });
    expect(JSON.parse(ready.stdout)).toEqual({ status: "ready", database: "pglite" });
  });
  it("answers flag mistakes and an unreachable server with one line and a non-zero exit code", async () => {
    const unknownFlag = await failure(cli(["keys", "create", "--workspce", "acme"], {}));
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toContain("Unknown option '--workspce'");
    expectOneLine(unknownFlag.stderr);

    const missingValue = await failure(cli(["wait", "--timeout"], {}));
    expect(missingValue.code).toBe(2);
    expectOneLine(missingValue.stderr);

    // A port nothing listens on: the one this test just held and closed.
    const holder = net.createServer().listen(0, "127.0.0.1");
    await once(holder, "listening");
    const closedPort = String((holder.address() as net.AddressInfo).port);
    holder.close();
    await once(holder, "close");
    const notReady = await failure(cli(["wait", "--timeout", "0.5"], { PORT: closedPort }));
    expect(notReady.code).toBe(1);
    // Why (ECONNREFUSED) depends on whether an attempt ended before the deadline; unreachable below says it.
    expect(notReady.stderr).toContain(`http://127.0.0.1:${closedPort}/readyz was not ready within 0.5 s (`);
    expectOneLine(notReady.stderr);

    const unreachable = await failure(cli(["keys", "list"], { PORT: closedPort, AGENTMEM_ADMIN_KEY: "x".repeat(20) }));
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(`cannot reach http://127.0.0.1:${closedPort} (ECONNREFUSED)`);
    expectOneLine(unreachable.stderr);
  });
});
