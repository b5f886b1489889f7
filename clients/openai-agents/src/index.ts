export { agentMemTools } from "./tools.js";
export { recalledMemories, type RecalledMemoriesOptions } from "./recalled-memories.js";
export { AgentMemError, type AgentMemOptions } from "@agentmem/rest";
