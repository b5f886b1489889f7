import { createRestClient, type AgentMemOptions, type AgentMemRest, type Memory, type MemoryType } from "@agentmem/rest";
import { BaseStore } from "@langchain/core/stores";

export interface AgentMemStoreInput extends AgentMemOptions {
  /** The type of the memories the store writes. Default fact. */
  type?: MemoryType;
  /** Names this store: its memories carry it as `metadata.langchainStore`, so stores of one key stay apart. Default "default". */
  namespace?: string;
}

/**
 * Long-term memory as a LangChain key-value store: each key is one memory whose content is the value, found by
 * `metadata.langchainKey`. Setting a key again updates the memory (a new version); values are text.
 */
export class AgentMemStore extends BaseStore<string, string> {
  lc_namespace = ["agentmem", "stores"];
  private readonly client: AgentMemRest;
  private readonly type: MemoryType;
  private readonly scope: Record<string, string>;
  private readonly tags: string[] | undefined;

  constructor(fields: AgentMemStoreInput) {
    super(fields);
    this.client = createRestClient(fields);
    this.type = fields.type ?? "fact";
    this.scope = { langchainStore: fields.namespace ?? "default" };
    this.tags = fields.tags;
  }

  private async find(key: string): Promise<Memory | undefined> {
    const page = await this.client.listMemories({ metadata: { ...this.scope, langchainKey: key }, pageSize: 1, ...(this.tags ? { tags: this.tags } : {}) });
    return page.memories[0];
  }

  async mget(keys: string[]): Promise<(string | undefined)[]> {
    return Promise.all(keys.map(async (key) => (await this.find(key))?.content));
  }

  async mset(pairs: [string, string][]): Promise<void> {
    for (const [key, value] of pairs) {
      const existing = await this.find(key);
      if (existing) await this.client.updateMemory(existing.id, { content: value });
      else
        await this.client.createMemory({
          content: value,
          type: this.type,
          metadata: { ...this.scope, langchainKey: key },
          ...(this.tags ? { tags: this.tags } : {}),
        });
    }
  }

  async mdelete(keys: string[]): Promise<void> {
    for (const key of keys) {
      const existing = await this.find(key);
      if (existing) await this.client.deleteMemory(existing.id);
    }
  }

  async *yieldKeys(prefix = ""): AsyncGenerator<string> {
    let pageToken: string | undefined;
    do {
      const page = await this.client.listMemories({ metadata: this.scope, pageSize: 100, ...(pageToken ? { pageToken } : {}), ...(this.tags ? { tags: this.tags } : {}) });
      for (const memory of page.memories) {
        const key = memory.metadata?.langchainKey;
        if (typeof key === "string" && key.startsWith(prefix)) yield key;
      }
      pageToken = page.nextPageToken;
    } while (pageToken);
  }
}
