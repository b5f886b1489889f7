export { AgentMemRetriever, type AgentMemRetrieverInput } from "./retriever.js";
export { AgentMemStore, type AgentMemStoreInput } from "./store.js";
export { agentMemTools } from "./tools.js";
export { AgentMemError, type AgentMemOptions } from "@agentmem/rest";
