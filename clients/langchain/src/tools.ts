import { agentTools, type AgentMemOptions, type AgentTool } from "@agentmem/rest";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";

// LangChain tools answer the model with text: the tool's result as JSON.
// The input is checked against the JSON Schema by LangChain before `execute` runs.
function asLangChainTool(t: AgentTool<any, unknown>): StructuredToolInterface {
  return tool(async (input: unknown) => JSON.stringify(await t.execute(input)), { name: t.name, description: t.description, schema: t.parameters });
}

/** The memory and skill tools (`remember`, `recall`, `findSkill`, `loadSkill`) for `model.bindTools(...)`. */
export function agentMemTools(options: AgentMemOptions): StructuredToolInterface[] {
  const tools = agentTools(options);
  return [tools.remember, tools.recall, tools.findSkill, tools.loadSkill].map(asLangChainTool);
}
