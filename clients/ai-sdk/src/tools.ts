import { agentTools, type AgentMemOptions, type AgentTool } from "@agentmem/rest";
import { jsonSchema, tool, type Tool } from "ai";

export interface AgentMemTools {
  remember: Tool;
  recall: Tool;
  findSkill: Tool;
  loadSkill: Tool;
}

// The input is checked against the JSON Schema by the SDK before `execute` runs.
function asAiTool(t: AgentTool<any, unknown>): Tool {
  return tool({ description: t.description, inputSchema: jsonSchema(t.parameters), execute: (input: unknown) => t.execute(input) });
}

/** Memory and skill tools for `generateText` / `streamText`: `tools: agentMemTools({ baseUrl, apiKey })`. */
export function agentMemTools(options: AgentMemOptions): AgentMemTools {
  const tools = agentTools(options);
  return {
    remember: asAiTool(tools.remember),
    recall: asAiTool(tools.recall),
    findSkill: asAiTool(tools.findSkill),
    loadSkill: asAiTool(tools.loadSkill),
  };
}
