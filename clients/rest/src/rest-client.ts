/** A small client for the part of the JSON REST API that agents use: write and recall memories, find and read skills. */

export type MemoryType = "fact" | "lesson" | "directive" | "preference" | "contact" | "bookmark";

export interface RecalledMemory {
  id: string;
  content: string;
  type: MemoryType;
  similarity: number;
  confidence: number;
  tags?: string[];
}

export interface RecallReceipt {
  searchMode: string;
  candidatesConsidered: number;
  returned: number;
  filtered: Record<string, number>;
}

export interface RecallAnswer {
  memories: RecalledMemory[];
  receipt?: RecallReceipt;
  _meta: { tokens: number; traceId?: string };
}

export interface RecallRequest {
  query: string;
  limit?: number;
  searchMode?: "semantic" | "keyword" | "hybrid";
  containers?: string[];
  types?: MemoryType[];
  tags?: string[];
  maxTokens?: number;
}

export interface MemoryInput {
  content: string;
  type: MemoryType;
  tags?: string[];
  containers?: string[];
  source?: "direct" | "conversation" | "capture" | "extraction" | "compaction";
  metadata?: Record<string, unknown>;
}

export interface Memory extends MemoryInput {
  id: string;
  version: number;
  createdAt: string;
}

export interface Skill {
  id: string;
  slug: string;
  name: string;
  description: string;
  content: string;
  similarity?: number;
  files?: Array<{ path: string; text?: string; base64?: string }>;
}

export interface MemoryFilter {
  tags?: string[];
  /** Only memories whose metadata contains this object. */
  metadata?: Record<string, unknown>;
  pageSize?: number;
  pageToken?: string;
}

export interface AgentMemOptions {
  /** The server's address, e.g. http://localhost:8080. */
  baseUrl: string;
  /** An API key (amk_...). */
  apiKey: string;
  /** Tags put on every memory these tools write, and the tags recall is limited to (optional). */
  tags?: string[];
}

/** An error answer of the service: its code (`not_found`, `invalid_request`, ...), HTTP status and, for bad input, the field and rule. */
export class AgentMemError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, string> = {},
  ) {
    super(`${code} (${status}): ${message}`);
    this.name = "AgentMemError";
  }
  get field(): string | undefined {
    return this.details.field;
  }
  get rule(): string | undefined {
    return this.details.rule;
  }
}

export interface AgentMemRest {
  createMemory(input: MemoryInput): Promise<Memory>;
  getMemory(id: string): Promise<Memory>;
  updateMemory(id: string, fields: Partial<MemoryInput>): Promise<Memory>;
  deleteMemory(id: string): Promise<void>;
  listMemories(filter: MemoryFilter): Promise<{ memories: Memory[]; nextPageToken?: string }>;
  recall(request: RecallRequest): Promise<RecallAnswer>;
  searchSkills(query: string, limit?: number): Promise<Skill[]>;
  getSkill(slug: string): Promise<Skill>;
}

export function createRestClient(options: AgentMemOptions): AgentMemRest {
  const base = options.baseUrl.replace(/\/+$/, "") + "/api/v1/agent";
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${options.apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : {};
    if (!res.ok) {
      const error = json.error ?? { code: "http_error", message: text.slice(0, 300) };
      throw new AgentMemError(res.status, error.code, error.message, error.details);
    }
    return json as T;
  };
  return {
    async createMemory(input) {
      const answer = await call<{ memories: Memory[] }>("POST", "/memories", input);
      return answer.memories[0]!;
    },
    getMemory: (id) => call("GET", `/memories/${encodeURIComponent(id)}`),
    updateMemory: (id, fields) => call("PATCH", `/memories/${encodeURIComponent(id)}`, fields),
    async deleteMemory(id) {
      await call("DELETE", `/memories/${encodeURIComponent(id)}`);
    },
    async listMemories(filter) {
      const query = new URLSearchParams();
      for (const tag of filter.tags ?? []) query.append("tags", tag);
      if (filter.metadata) query.set("metadata", JSON.stringify(filter.metadata));
      if (filter.pageSize) query.set("pageSize", String(filter.pageSize));
      if (filter.pageToken) query.set("pageToken", filter.pageToken);
      return call("GET", `/memories?${query}`);
    },
    recall: (request) => call("POST", "/recall", request),
    async searchSkills(query, limit = 5) {
      return (await call<{ skills: Skill[] }>("POST", "/skills/search", { query, limit })).skills;
    },
    async getSkill(slug) {
      return (await call<{ skill: Skill }>("POST", "/skills/get", { slug })).skill;
    },
  };
}
