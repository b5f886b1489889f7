import { parseArgs } from "node:util";
import { memoriesUsage } from "./memories.js";
import { CliError, fetchServer } from "./server.js";
import { skillsUsage } from "./skills.js";
import { waitUsage } from "./wait.js";

// `agentmem keys` wraps the admin REST API: it talks to AGENTMEM_URL (default http://127.0.0.1:$PORT)
// with AGENTMEM_ADMIN_KEY and prints the service's JSON answer. `agentmem reindex` works on the
// storage itself, with the server's configuration (DATA_DIR, DATABASE_URL, EMBEDDING_*, VECTOR_BACKEND).

const usage = `usage:
  agentmem keys create --workspace <name> [--container <name>] [--name <label>] [--expires-at <iso8601>] [--admin]
  agentmem keys list [--workspace <name>] [--include-revoked]
  agentmem keys rotate <key-id>
  agentmem keys revoke <key-id>
  agentmem workspaces profile <workspace> [--author-handle <handle>] [--email <address>] [--verified true|false]
                                set the marketplace author profile (an empty --email removes it)
  agentmem reindex [--force]    re-embed every memory and skill with the configured model (stop the server first
                                when storage is embedded; resumable)
${waitUsage}
${skillsUsage}
  agentmem mcp                  the MCP server over stdio (for desktop agent clients), relayed to AGENTMEM_URL/mcp
${memoriesUsage}

environment: AGENTMEM_URL (default http://127.0.0.1:$PORT, PORT default 8080), AGENTMEM_ADMIN_KEY (required for keys),
  AGENTMEM_API_KEY (an agent key, required for skills, memories and mcp)`;

/** A command line that names no command or misses an argument: usage, exit code 2. */
class UsageError extends Error {}

async function call(method: string, path: string, body?: unknown): Promise<number> {
  const adminKey = process.env.AGENTMEM_ADMIN_KEY;
  if (!adminKey) throw new CliError("AGENTMEM_ADMIN_KEY is not set: the keys and workspaces commands need the server's admin key");
  const res = await fetchServer(path, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : null,
  });
  console.log(await res.text());
  return res.ok ? 0 : 1;
}

async function keys(command: string | undefined, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
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
      return call("POST", "/api/v1/admin/keys", {
        workspace: values.workspace,
        container: values.container,
        name: values.name,
        expiresAt: values["expires-at"],
        admin: values.admin,
      });
    case "list": {
      const query = new URLSearchParams();
      if (values.workspace) query.set("workspace", values.workspace);
      if (values["include-revoked"]) query.set("includeRevoked", "true");
      return call("GET", `/api/v1/admin/keys${query.size ? `?${query}` : ""}`);
    }
    case "rotate":
    case "revoke": {
      const id = positionals[0];
      if (!id) throw new UsageError(`agentmem keys ${command} needs a key id`);
      const path = `/api/v1/admin/keys/${encodeURIComponent(id)}`;
      return command === "rotate" ? call("POST", `${path}/rotate`, {}) : call("DELETE", path);
    }
    default:
      throw new UsageError(command ? `unknown command: keys ${command}` : "agentmem keys needs a command");
  }
}

async function workspaces(command: string | undefined, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { "author-handle": { type: "string" }, email: { type: "string" }, verified: { type: "string" } },
  });
  const workspace = positionals[0];
  const usage = "usage: agentmem workspaces profile <workspace> [--author-handle <handle>] [--email <address>] [--verified true|false]";
  if (command !== "profile" || !workspace) throw new UsageError(usage);
  if (values.verified !== undefined && values.verified !== "true" && values.verified !== "false") throw new UsageError(`--verified must be true or false; ${usage}`);
  return call("PUT", `/api/v1/admin/workspaces/${encodeURIComponent(workspace)}/profile`, {
    authorHandle: values["author-handle"],
    email: values.email,
    verified: values.verified === undefined ? undefined : values.verified === "true",
  });
}

async function run(group: string | undefined, command: string | undefined, rest: string[]): Promise<number> {
  switch (group) {
    case "keys":
      return keys(command, rest);
    case "workspaces":
      return workspaces(command, rest);
    case "reindex": {
      const { values } = parseArgs({ args: [command, ...rest].filter((a) => a !== undefined), options: { force: { type: "boolean" } } });
      const { reindex } = await import("./reindex.js");
      await reindex(values.force ?? false);
      return 0;
    }
    case "wait": {
      const { waitCommand } = await import("./wait.js");
      return waitCommand([command, ...rest].filter((a) => a !== undefined));
    }
    case "mcp": {
      const { mcpCommand } = await import("./mcp.js");
      return mcpCommand();
    }
    case "skills": {
      const { skillsCommand } = await import("./skills.js");
      return skillsCommand(command, rest);
    }
    case "memories": {
      const { memoriesCommand } = await import("./memories.js");
      return memoriesCommand(command, rest);
    }
    case "help":
    case "--help":
    case "-h":
      console.log(usage);
      return 0;
    default:
      throw new UsageError(group ? `unknown command: ${group}` : "no command given");
  }
}

/** parseArgs' own failures (an unknown flag, a flag without its value): the person's mistake, not a bug. */
const isFlagMistake = (err: unknown) => typeof (err as { code?: unknown }).code === "string" && (err as { code: string }).code.startsWith("ERR_PARSE_ARGS_");

const [group, command, ...rest] = process.argv.slice(2);
try {
  process.exit(await run(group, command, rest));
} catch (err) {
  if (err instanceof UsageError) {
    console.error(`agentmem: ${err.message}\n\n${usage}`);
    process.exit(2);
  }
  if (isFlagMistake(err)) {
    // Node's message goes on about positionals after "--"; its first sentence names the mistake.
    const mistake = (err as Error).message.split(/\.\s/)[0];
    console.error(`agentmem: ${mistake} (agentmem help lists the commands and their flags)`);
    process.exit(2);
  }
  if (err instanceof CliError) {
    console.error(`agentmem: ${err.message}`);
    process.exit(1);
  }
  throw err;
}
