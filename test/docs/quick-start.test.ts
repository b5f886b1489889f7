import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectHttp, toolJson } from "../mcp/mcp-client.js";
import { startsProcessesTimeoutMs, startTestServer, type TestServer } from "../support/test-server.js";
import { root } from "./markdown.js";

// The quick starts' commands, run as written against a real server: the README's and the getting-started
// tutorial's first shell blocks go through bash, with the test's server in the place of `npm start` (its
// port for :8080, the admin key the block exports), the CLI of this checkout for `npx agentmem`, and
// curl told to fail on an HTTP error. The MCP configuration the README gives is then used as written.

const run = promisify(execFile);

/** The fenced blocks of a language in the section under a heading (up to the next heading of its level or above). */
function blocksUnder(markdown: string, heading: string, language: string): string[] {
  const level = /^#+/.exec(heading)![0].length;
  const blocks: string[] = [];
  let inSection = false;
  let block: string[] | undefined;
  let fence: string | undefined;
  for (const line of markdown.split("\n")) {
    if (fence !== undefined) {
      if (line.startsWith("```")) {
        if (block) blocks.push(block.join("\n"));
        fence = undefined;
        block = undefined;
      } else block?.push(line);
      continue;
    }
    if (line.startsWith("```")) {
      fence = line.slice(3);
      block = inSection && fence === language ? [] : undefined;
      continue;
    }
    const h = /^(#+) /.exec(line);
    if (h && h[1]!.length <= level) inSection = line === heading;
  }
  if (blocks.length === 0) throw new Error(`no ${language} block under ${heading}`);
  return blocks;
}

/** bash with the quick start's outside world replaced by the test's server and this checkout. */
function harness(port: number): string {
  return `set -euo pipefail
npm() { :; }                # npm ci and npm start: the test's server is already running
kill() { :; }               # stopping it is the test's business
curl() { command curl --silent --show-error --fail-with-body --max-time 60 --write-out '\\n' "\${@//localhost:8080/127.0.0.1:${port}}"; }
npx() {
  if [ "$1" = agentmem ]; then shift; node ${JSON.stringify(path.join(root, "src/cli/agentmem.mjs"))} "$@";
  else (cd ${JSON.stringify(root)} && command npx "\${@//127.0.0.1:8080/127.0.0.1:${port}}"); fi
}
export AGENTMEM_URL=http://127.0.0.1:${port}
`;
}

const readme = await readFile(path.join(root, "README.md"), "utf8");
const tutorial = await readFile(path.join(root, "docs/tutorials/getting-started.md"), "utf8");

const pages = [
  { page: "README.md", block: blocksUnder(readme, "## Quick start", "sh")[0]! },
  { page: "docs/tutorials/getting-started.md", block: blocksUnder(tutorial, "## Store and recall", "sh")[0]! },
];

describe.each(pages)("the quick start of $page", ({ block }) => {
  let server: TestServer;
  let cwd: string;

  beforeAll(async () => {
    const adminKey = /^export AGENTMEM_ADMIN_KEY=(\S+)/m.exec(block)?.[1];
    expect(adminKey, "the quick start exports an admin key").toBeDefined();
    server = await startTestServer("pglite", { AGENTMEM_ADMIN_KEY: adminKey! });
    cwd = await mkdtemp(path.join(os.tmpdir(), "agentmem-quick-start-"));
  }, startsProcessesTimeoutMs);

  afterAll(async () => {
    await server?.close();
    if (cwd) await rm(cwd, { recursive: true, force: true });
  });

  it(
    "runs as written and ends in a recall that finds the memory",
    async () => {
      expect(block).toMatch(/^npm ci$/m);
      expect(block).toMatch(/npm start/);
      const port = new URL(server.url).port;
      // The key the block creates, printed at the end for the MCP step.
      const script = `${harness(Number(port))}${block}\necho; echo "KEY=$KEY"\n`;
      const { stdout } = await run("bash", ["-c", script], { cwd, maxBuffer: 16 * 1024 * 1024, timeout: startsProcessesTimeoutMs });
      const lines = stdout.trim().split("\n");
      const key = /^KEY=(amk_\S+)$/.exec(lines.at(-1)!)?.[1];
      expect(key, stdout).toBeDefined();
      // Every JSON answer is printed on a line of its own; the last is the recall's.
      const answers = lines.slice(0, -1).flatMap((line) => {
        try {
          return line.startsWith("{") ? [JSON.parse(line)] : [];
        } catch {
          return []; // buf curl prints its answer over several lines
        }
      });
      const recall = answers.at(-1);
      expect(recall.memories[0].content, JSON.stringify(recall)).toBe("The user prefers dark mode");

      if (block === pages[0]!.block) {
        // The MCP configuration the README gives, with this key, connects and recalls the same memory.
        const [config] = blocksUnder(readme, "## Quick start", "json");
        const entry = JSON.parse(config!).mcpServers.agentmem as { type: string; url: string; headers: Record<string, string> };
        expect(entry.type).toBe("http");
        const url = new URL(entry.url);
        expect(url.port).toBe("8080");
        const authorization = entry.headers.Authorization!.replace("amk_…", key!);
        const client = await connectHttp(`http://127.0.0.1:${port}`, authorization.replace(/^Bearer /, ""));
        try {
          const answer = await toolJson(client, "recall", { query: "which theme does the user like?" });
          expect(answer.memories[0].content).toBe("The user prefers dark mode");
        } finally {
          await client.close();
        }
        expect(url.pathname).toBe("/mcp");
      }
    },
    startsProcessesTimeoutMs,
  );
});
