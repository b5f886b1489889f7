import { parseArgs } from "node:util";
import { memoriesUsage } from "./memories.js";
import { skillsUsage } from "./skills.js";

// `agentmem keys` wraps the admin REST API: it talks to AGENTMEM_URL (default http://127.0.0.1:8080)
// with AGENTMEM_ADMIN_KEY and prints the service's JSON answer. `agentmem reindex` works on the
// storage itself, with the server's configuration (DATA_DIR, DATABASE_URL, EMBEDDING_*, VECTOR_BACKEND).

const usage = `usage:
  agentmem keys create --workspace <name> [--container <name>] [--name <label>] [--expires-at <iso8601>] [--admin]
  agentmem keys list [--workspace <name>] [--include-revoked]
  agentmem keys rotate <key-id>
  agentmem keys revoke <key-id>
  agentmem workspaces profile <workspace> [--author-handle <handle>] [--email <address>]
                                set the marketplace author profile (an empty --email removes it)
  agentmem reindex [--force]    re-embed every memory and skill with the configured model (stop the server first
                                when storage is embedded; resumable)
${skillsUsage}
  agentmem mcp                  the MCP server over stdio (for desktop agent clients), relayed to AGENTMEM_URL/mcp
${memoriesUsage}

environment: AGENTMEM_URL (default http://127.0.0.1:8080), AGENTMEM_ADMIN_KEY (required for keys),
  AGENTMEM_API_KEY (an agent key, required for skills, memories and mcp)`;

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

async function call(method: string, path: string, body?: unknown): Promise<void> {
  const base = (process.env.AGENTMEM_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
  const adminKey = process.env.AGENTMEM_ADMIN_KEY ?? fail("AGENTMEM_ADMIN_KEY is not set\n\n" + usage);
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : null,
  }).catch((err: Error) => fail(`cannot reach ${base}: ${err.message}`));
  const text = await res.text();
  console.log(text);
  if (!res.ok) process.exit(1);
}

const [group, command, ...rest] = process.argv.slice(2);
if (group === "reindex") {
  const { reindex } = await import("./reindex.js");
  await reindex([command, ...rest].includes("--force"));
  process.exit(0);
}
if (group === "mcp") {
  const { mcpCommand } = await import("./mcp.js");
  process.exit(await mcpCommand());
}
if (group === "skills") {
  const { skillsCommand } = await import("./skills.js");
  process.exit(await skillsCommand(command, rest));
}
if (group === "workspaces") {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { "author-handle": { type: "string" }, email: { type: "string" } },
  });
  const workspace = positionals[0];
  if (command !== "profile" || !workspace) fail(usage);
  await call("PUT", `/api/v1/admin/workspaces/${encodeURIComponent(workspace)}/profile`, {
    authorHandle: values["author-handle"],
    email: values.email,
  });
  process.exit(0);
}
if (group === "memories") {
  const { memoriesCommand } = await import("./memories.js");
  process.exit(await memoriesCommand(command, rest));
}
if (group !== "keys") fail(usage);
const { values, positionals } = parseArgs({
  args: rest,
  allowPositionals: true,
  options: {
    workspace: { type: "string" },
    container: { type: "string" },
    name: { type: "string" },
    "expires-at": { type: "string" },
    admin: { type: "boolean" },
    "include-revoked": { type: "boolean" },
  },
});

switch (command) {
  case "create":
    await call("POST", "/api/v1/admin/keys", {
      workspace: values.workspace,
      container: values.container,
      name: values.name,
      expiresAt: values["expires-at"],
      admin: values.admin,
    });
    break;
  case "list": {
    const query = new URLSearchParams();
    if (values.workspace) query.set("workspace", values.workspace);
    if (values["include-revoked"]) query.set("includeRevoked", "true");
    await call("GET", `/api/v1/admin/keys${query.size ? `?${query}` : ""}`);
    break;
  }
  case "rotate":
  case "revoke": {
    const id = positionals[0] ?? fail(`missing key id\n\n${usage}`);
    await call(command === "rotate" ? "POST" : "DELETE", `/api/v1/admin/keys/${encodeURIComponent(id)}${command === "rotate" ? "/rotate" : ""}`, command === "rotate" ? {} : undefined);
    break;
  }
  default:
    fail(usage);
}
