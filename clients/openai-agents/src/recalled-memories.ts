import { createRestClient, memoryContext, type AgentMemOptions } from "@agentmem/rest";

export interface RecalledMemoriesOptions extends AgentMemOptions {
  /** The most tokens of memory content (the server drops what would exceed it). Default 500. */
  maxTokens?: number;
  /** The most memories. Default 5. */
  limit?: number;
}

/**
 * What is remembered about `message`, as a block to append to an agent's instructions for this turn
 * (empty when nothing is): the model sees it without having to call `recall`.
 */
export async function recalledMemories(options: RecalledMemoriesOptions, message: string): Promise<string> {
  const answer = await createRestClient(options).recall({
    query: message,
    limit: options.limit ?? 5,
    maxTokens: options.maxTokens ?? 500,
    ...(options.tags ? { tags: options.tags } : {}),
  });
  return memoryContext(answer);
}
