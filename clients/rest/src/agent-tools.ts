/**
 * The memory and skill tools every adapter gives a model, independent of any framework: a name, a
 * description written for the model, a JSON Schema for the input, and what running the tool does.
 */
import { createRestClient, type AgentMemOptions, type AgentMemRest, type MemoryType, type RecallAnswer } from "./rest-client.js";

export interface JsonSchemaObject {
  type: "object";
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  additionalProperties: false;
}

export interface AgentTool<Input, Output> {
  name: string;
  description: string;
  parameters: JsonSchemaObject;
  execute(input: Input): Promise<Output>;
}

const memoryTypes: MemoryType[] = ["fact", "lesson", "directive", "preference", "contact", "bookmark"];

export interface AgentTools {
  remember: AgentTool<{ content: string; type: MemoryType }, { stored: string }>;
  recall: AgentTool<{ query: string; limit?: number }, { memories: Array<{ id: string; content: string; type: string; similarity: number }> }>;
  findSkill: AgentTool<{ query: string }, { skills: Array<{ slug: string; name: string; description: string }> }>;
  loadSkill: AgentTool<{ slug: string }, { slug: string; name: string; instructions: string; files: string[] }>;
}

/** The four tools bound to one server and key (or to a client already made). */
export function agentTools(options: AgentMemOptions, client: AgentMemRest = createRestClient(options)): AgentTools {
  const tags = options.tags;
  return {
    remember: {
      name: "remember",
      description:
        "Save one durable fact about the user, their work or the world for future conversations. Use it when the user " +
        "states a preference, a decision, a fact about themselves or a rule to follow. Write a short standalone sentence " +
        "that makes sense without this conversation (name the subject; no 'he' or 'this').",
      parameters: {
        type: "object",
        properties: {
          content: { type: "string", description: "The memory as one self-contained sentence." },
          type: {
            type: "string",
            enum: memoryTypes,
            description: "preference (likes, wants), fact (true statement), directive (rule to obey), lesson (learned from a mistake), contact (a person), bookmark (a link).",
          },
        },
        required: ["content", "type"],
        additionalProperties: false,
      },
      async execute({ content, type }) {
        const memory = await client.createMemory({ content, type, source: "conversation", ...(tags ? { tags } : {}) });
        return { stored: memory.id };
      },
    },
    recall: {
      name: "recall",
      description:
        "Search long-term memory for what is known about a topic: the user's preferences, earlier decisions, facts " +
        "from past conversations. Use it before answering a question that may depend on something said before. " +
        "Returns the most relevant memories, best first.",
      parameters: {
        type: "object",
        properties: {
          query: { type: "string", description: "What to look for, in plain words." },
          limit: { type: "integer", minimum: 1, maximum: 20, description: "How many memories at most (default 5)." },
        },
        required: ["query"],
        additionalProperties: false,
      },
      async execute({ query, limit }) {
        const answer = await client.recall({ query, limit: limit ?? 5, ...(tags ? { tags } : {}) });
        return { memories: answer.memories.map((m) => ({ id: m.id, content: m.content, type: m.type, similarity: m.similarity })) };
      },
    },
    findSkill: {
      name: "findSkill",
      description:
        "Find a skill (step-by-step instructions for a task, such as a deploy checklist or a report template) that " +
        "matches what you are asked to do. Returns candidate skills with their slug; read one with loadSkill before " +
        "following it.",
      parameters: {
        type: "object",
        properties: { query: { type: "string", description: "The task, in plain words." } },
        required: ["query"],
        additionalProperties: false,
      },
      async execute({ query }) {
        const skills = await client.searchSkills(query);
        return { skills: skills.map((s) => ({ slug: s.slug, name: s.name, description: s.description })) };
      },
    },
    loadSkill: {
      name: "loadSkill",
      description: "Read a skill's full instructions (its SKILL.md) by slug, as found by findSkill, and follow them.",
      parameters: {
        type: "object",
        properties: { slug: { type: "string", description: "The skill's slug from findSkill." } },
        required: ["slug"],
        additionalProperties: false,
      },
      async execute({ slug }) {
        const skill = await client.getSkill(slug);
        return { slug: skill.slug, name: skill.name, instructions: skill.content, files: (skill.files ?? []).map((f) => f.path) };
      },
    },
  };
}

/** Recalled memories as a block for a system prompt; empty when nothing was recalled. */
export function memoryContext(answer: RecallAnswer): string {
  if (answer.memories.length === 0) return "";
  const lines = answer.memories.map((m) => `- ${m.content}`);
  return `Relevant memories from earlier conversations (may be incomplete; prefer what the user says now):\n${lines.join("\n")}`;
}
