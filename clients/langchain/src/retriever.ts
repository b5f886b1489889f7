import { createRestClient, type AgentMemOptions, type RecallRequest } from "@agentmem/rest";
import { Document } from "@langchain/core/documents";
import { BaseRetriever, type BaseRetrieverInput } from "@langchain/core/retrievers";

export interface AgentMemRetrieverInput extends AgentMemOptions, BaseRetrieverInput {
  /** Recall options other than the query: limit, searchMode, types, containers, maxTokens. Tags come from `tags`. */
  recall?: Omit<RecallRequest, "query" | "tags">;
}

/**
 * Recall as a LangChain retriever: one Document per memory (`pageContent` is the memory's text), with the
 * memory's id, type, similarity and confidence, the recall's receipt and its trace id in `metadata`.
 */
export class AgentMemRetriever extends BaseRetriever {
  static lc_name(): string {
    return "AgentMemRetriever";
  }
  lc_namespace = ["agentmem", "retrievers"];
  private readonly client;
  private readonly request: Omit<RecallRequest, "query">;

  constructor(fields: AgentMemRetrieverInput) {
    super(fields);
    this.client = createRestClient(fields);
    this.request = { ...fields.recall, ...(fields.tags ? { tags: fields.tags } : {}) };
  }

  async _getRelevantDocuments(query: string): Promise<Document[]> {
    const answer = await this.client.recall({ ...this.request, query });
    return answer.memories.map(
      (m) =>
        new Document({
          pageContent: m.content,
          id: m.id,
          metadata: { id: m.id, type: m.type, similarity: m.similarity, confidence: m.confidence, receipt: answer.receipt, traceId: answer._meta.traceId },
        }),
    );
  }
}
