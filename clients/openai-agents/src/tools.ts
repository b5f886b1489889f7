import { agentTools, type AgentMemOptions, type AgentTool, type JsonSchemaObject } from "@agentmem/rest";
import { tool, type FunctionTool } from "@openai/agents";

type StrictParameters = Extract<Parameters<typeof tool>[0], { strict?: true }>["parameters"];

/**
 * OpenAI's strict function calling wants every property required: an optional one becomes required and
 * nullable, and a null the model sends for it is dropped before the tool runs.
 */
function strictSchema(schema: JsonSchemaObject): StrictParameters {
  const properties = Object.fromEntries(
    Object.entries(schema.properties).map(([name, property]) =>
      schema.required.includes(name) ? [name, property] : [name, { ...property, type: [property.type, "null"] }],
    ),
  );
  return { ...schema, properties, required: Object.keys(properties) } as StrictParameters;
}

function withoutNulls(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null));
}

function asAgentsTool(t: AgentTool<any, unknown>): FunctionTool {
  return tool({
    name: t.name,
    description: t.description,
    parameters: strictSchema(t.parameters),
    execute: async (input) => t.execute(withoutNulls(input as Record<string, unknown>)),
  }) as FunctionTool;
}

/** The memory and skill tools (`remember`, `recall`, `findSkill`, `loadSkill`) for `new Agent({ tools })`. */
export function agentMemTools(options: AgentMemOptions): FunctionTool[] {
  const tools = agentTools(options);
  return [tools.remember, tools.recall, tools.findSkill, tools.loadSkill].map(asAgentsTool);
}
