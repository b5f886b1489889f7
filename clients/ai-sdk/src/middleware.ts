import { createRestClient, memoryContext, type AgentMemOptions } from "@agentmem/rest";
import { wrapLanguageModel, type LanguageModelMiddleware } from "ai";

type Prompt = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0]["params"]["prompt"];

export interface MemoryMiddlewareOptions extends AgentMemOptions {
  /** The most tokens of recalled memory content added to the prompt (the server drops what would exceed it). Default 500. */
  maxTokens?: number;
  /** The most memories added. Default 5. */
  limit?: number;
}

/** The text of the last user message: what recall is asked about. */
function lastUserText(prompt: Prompt): string {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i]!;
    if (message.role !== "user") continue;
    return message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
  }
  return "";
}

/**
 * Recalls memories for the last user message and adds them to the prompt as a system message, after any
 * system messages of the caller, within `maxTokens`.
 */
export function agentMemMiddleware(options: MemoryMiddlewareOptions): LanguageModelMiddleware {
  const client = createRestClient(options);
  // A tool loop calls the model once per step with the same last user message: recall once for it.
  let cached: { query: string; block: Promise<string> } | undefined;
  return {
    specificationVersion: "v3",
    async transformParams({ params }) {
      const query = lastUserText(params.prompt);
      if (!query) return params;
      if (cached?.query !== query) {
        const request = { query, limit: options.limit ?? 5, maxTokens: options.maxTokens ?? 500, ...(options.tags ? { tags: options.tags } : {}) };
        cached = { query, block: client.recall(request).then(memoryContext) };
      }
      const block = await cached.block;
      if (!block) return params;
      const leadingSystem = params.prompt.findIndex((m) => m.role !== "system");
      const at = leadingSystem === -1 ? params.prompt.length : leadingSystem;
      return { ...params, prompt: [...params.prompt.slice(0, at), { role: "system", content: block }, ...params.prompt.slice(at)] };
    },
  };
}

export type MemoryModel = Parameters<typeof wrapLanguageModel>[0]["model"];

/** `model` with memories recalled into its prompt: `generateText({ model: withMemory(model, options), ... })`. */
export function withMemory(model: MemoryModel, options: MemoryMiddlewareOptions): MemoryModel {
  return wrapLanguageModel({ model, middleware: agentMemMiddleware(options) });
}
