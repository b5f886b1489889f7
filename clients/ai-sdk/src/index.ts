export { agentMemTools, type AgentMemTools } from "./tools.js";
export { agentMemMiddleware, withMemory, type MemoryMiddlewareOptions, type MemoryModel } from "./middleware.js";
export { AgentMemError, type AgentMemOptions } from "@agentmem/rest";
