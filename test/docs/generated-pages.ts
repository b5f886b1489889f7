import { Code } from "@connectrpc/connect";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { connectHttp } from "../mcp/mcp-client.js";
import { startTestServer } from "../support/test-server.js";
import { anchorsOf, headingSlug, root } from "./markdown.js";
import { configTable, errorCodeTable, mcpToolTable, type ListedTool } from "./tables.js";

export interface GeneratedPart {
  /** The page, relative to the repository's root. */
  file: string;
  /** The name in its `<!-- generated:NAME … -->` markers. */
  name: string;
  content: string;
}

/** The tools a real server lists at /mcp, asked through the MCP endpoint with an agent key. */
export async function servedTools(): Promise<ListedTool[]> {
  const server = await startTestServer("pglite", { MARKETPLACE_ENABLED: "true" });
  try {
    const client = await connectHttp(server.url, await server.createKey("docs", "tools"));
    try {
      return (await client.listTools()).tools as ListedTool[];
    } finally {
      await client.close();
    }
  } finally {
    await server.close();
  }
}

const defaultsPage = "docs/explanation/configuration-defaults.md";

/** The link to a variable's section of the defaults page, from docs/reference/, where it has one. */
function whyLink(): (variable: string) => string | undefined {
  const page = readFileSync(path.join(root, defaultsPage), "utf8");
  const anchors = anchorsOf(page);
  const headings = [...page.matchAll(/^## (.*)$/gm)].map((m) => m[1]!);
  return (variable) => {
    const heading = headings.find((h) => h.split(/,\s*/).includes(variable));
    if (!heading || !anchors.has(headingSlug(heading))) return undefined;
    return `../explanation/configuration-defaults.md#${headingSlug(heading)}`;
  };
}

/** gRPC's name of a Connect code: `InvalidArgument` → `INVALID_ARGUMENT`. */
const grpcName = (code: number) => (Code[code] ?? String(code)).replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();

/** What `agentmem help` prints, as a fenced block. */
function cliUsage(): string {
  const usage = execFileSync(process.execPath, [path.join(root, "src/cli/agentmem.mjs"), "help"], { encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } });
  return "```text\n" + usage.trimEnd() + "\n```";
}

/** Every generated part of the documentation, as the code gives it now. */
export function generatedParts(tools: ListedTool[]): GeneratedPart[] {
  return [
    { file: "docs/reference/configuration.md", name: "config", content: configTable(whyLink()) },
    { file: "docs/reference/mcp-tools.md", name: "mcp-tools", content: mcpToolTable(tools) },
    { file: "docs/reference/api/errors.md", name: "error-codes", content: errorCodeTable(grpcName) },
    { file: "docs/reference/cli.md", name: "cli-usage", content: cliUsage() },
  ];
}
