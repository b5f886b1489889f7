import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/test-server.js";

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, "../..");
const tsc = path.join(repoRoot, "node_modules/typescript/bin/tsc");

// A service that depends on the package as it would from a registry: TypeScript typed against its
// declarations, compiled by tsc, run by plain node (no tsx), through the package's `exports`.
const consumer = `
import { agentMemError, createAgentMemClient, MemoryType } from "@agentmem/client";

declare const process: { env: Record<string, string | undefined> };

const client = createAgentMemClient({
  baseUrl: process.env.AGENTMEM_URL!,
  apiKey: process.env.AGENTMEM_API_KEY!,
  transport: process.env.TRANSPORT as "connect" | "grpc",
});
const created = await client.memories.createMemories({ content: "The user prefers tabs", type: MemoryType.PREFERENCE, tags: ["editor"] });
const read = await client.memories.getMemory({ id: created.ids[0]! });
const missing = await client.memories.getMemory({ id: "mem_missing" }).catch(agentMemError);
console.log(JSON.stringify({ content: read.content, type: MemoryType[read.type], tags: read.tags, missing }));
`;

describe("clients/typescript: the typed client package, built with tsc", () => {
  let server: TestServer;
  let dir: string;

  beforeAll(async () => {
    server = await startTestServer("pglite");
    dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-client-"));
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("builds to dist/ and calls a real server over Connect and gRPC from plain node", async () => {
    await run(process.execPath, [tsc, "-p", path.join(repoRoot, "clients/typescript")], { timeout: 120_000 });

    await mkdir(path.join(dir, "node_modules/@agentmem"), { recursive: true });
    await symlink(path.join(repoRoot, "clients/typescript"), path.join(dir, "node_modules/@agentmem/client"), "dir");
    await writeFile(path.join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
    await writeFile(path.join(dir, "service.ts"), consumer);
    const compilerOptions = { module: "nodenext", target: "es2022", strict: true, skipLibCheck: true, types: [] };
    await writeFile(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["service.ts"] }));
    await run(process.execPath, [tsc, "-p", dir], { timeout: 120_000 });

    const key = await server.createKey("acme", "agent-1");
    for (const transport of ["connect", "grpc"]) {
      const { stdout } = await run(process.execPath, ["service.js"], {
        cwd: dir,
        env: { PATH: process.env.PATH, AGENTMEM_URL: server.url, AGENTMEM_API_KEY: key, TRANSPORT: transport },
        timeout: 30_000,
      });
      expect(JSON.parse(stdout), transport).toEqual({
        content: "The user prefers tabs",
        type: "PREFERENCE",
        tags: ["editor"],
        missing: { code: "not_found", message: "memory mem_missing does not exist", details: { id: "mem_missing" } },
      });
    }
  });
});
