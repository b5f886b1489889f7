import { getOption, hasOption, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { mcp_description, mcp_tool } from "../../../gen/agent/v1/mcp_pb.js";
import { standaloneSchema, type Json, type SchemaOptions } from "../../codegen/json-schema.js";

// Which RPCs are MCP tools, and their definitions. protoc-gen-openapi writes the definitions, with
// the proto comments as descriptions, to gen/mcp-tools.json; the server reads that file at start.

export interface McpToolDefinition {
  name: string;
  /** The RPC behind the tool, e.g. agent.v1.MemoryService/CreateMemories. */
  rpc: string;
  description?: string;
  /** JSON Schema of the request message in REST JSON. */
  inputSchema: Json;
  /** JSON Schema of the response message in REST JSON. */
  outputSchema: Json;
}

export const rpcName = (method: DescMethod): string => `${method.parent.typeName}/${method.name}`;

/** The tool name of an RPC annotated with (agent.v1.mcp_tool), or undefined when it is not a tool. */
export function mcpToolName(method: DescMethod): string | undefined {
  return hasOption(method, mcp_tool) ? getOption(method, mcp_tool) : undefined;
}

/** One definition per annotated RPC of the services, in proto order; tool names must be unique. */
export function mcpToolDefinitions(services: DescService[], describe?: SchemaOptions["describe"]): McpToolDefinition[] {
  const tools: McpToolDefinition[] = [];
  for (const method of services.flatMap((service) => service.methods)) {
    const name = mcpToolName(method);
    if (name === undefined) continue;
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(name)) throw new Error(`${rpcName(method)}: MCP tool name ${name} is not snake_case`);
    if (tools.some((tool) => tool.name === name)) throw new Error(`${rpcName(method)}: MCP tool name ${name} is taken`);
    const description = hasOption(method, mcp_description) ? getOption(method, mcp_description) : describe?.(method);
    tools.push({
      name,
      rpc: rpcName(method),
      ...(description === undefined ? {} : { description }),
      inputSchema: standaloneSchema(method.input, { describe, singleItem: true }),
      outputSchema: standaloneSchema(method.output, { describe }),
    });
  }
  return tools;
}
