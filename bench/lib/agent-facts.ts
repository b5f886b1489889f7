import { readFile } from "node:fs/promises";
import { postOrFail as post } from "./http-json.js";

// Our own recall benchmark of short agent memories (bench/data/agent-facts/, written for this project):
// 152 memories of the six types about one user, the people around them and two projects, with near
// misses that share words, and 159 questions as an agent asks them. Every fourth question (index 3, 7,
// …) is held out: nothing was tuned on it. The questions were written before any ranking was looked at.

export interface AgentMemory {
  /** Stable label the questions refer to. */
  key: string;
  type: string;
  container: string;
  content: string;
}

export interface AgentQuestion {
  query: string;
  /** Keys of the memories that answer it (any one is a hit). */
  expect: string[];
  heldOut: boolean;
}

const dataDir = new URL("../data/agent-facts/", import.meta.url);

const jsonLines = async <T>(name: string): Promise<T[]> =>
  (await readFile(new URL(name, dataDir), "utf8"))
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as T);

export const isHeldOut = (index: number) => index % 4 === 3;

export async function loadAgentFacts(): Promise<{ memories: AgentMemory[]; questions: AgentQuestion[] }> {
  const memories = await jsonLines<AgentMemory>("memories.jsonl");
  const questions = (await jsonLines<Omit<AgentQuestion, "heldOut">>("questions.jsonl")).map((q, i) => ({ ...q, heldOut: isHeldOut(i) }));
  return { memories, questions };
}

export interface IngestedFacts {
  /** A workspace-level agent key. */
  key: string;
  idOf: Map<string, string>;
  keyOf: Map<string, string>;
  /** "older → newer" for every memory a contradiction shadowed. */
  shadowed: string[];
}

/**
 * Stores the memories in file order, one at a time (as an agent learns them, so a later memory can
 * shadow an earlier one), through the REST API of a running server.
 */
export async function ingestAgentFacts(baseUrl: string, adminKey: string, memories: readonly AgentMemory[]): Promise<IngestedFacts> {
  const key = (await post(`${baseUrl}/api/v1/admin/keys`, adminKey, { workspace: "agent-facts" })).key as string;
  const idOf = new Map<string, string>();
  const keyOf = new Map<string, string>();
  const shadowed: string[] = [];
  for (const m of memories) {
    const res = await post(`${baseUrl}/api/v1/agent/memories`, key, { content: m.content, type: m.type, containers: [m.container] });
    const id = res.ids[0] as string;
    idOf.set(m.key, id);
    keyOf.set(id, m.key);
    for (const c of res.contradictions as Array<{ conflictsWith: string; shadowed: boolean }>) {
      if (c.shadowed) shadowed.push(`${keyOf.get(c.conflictsWith) ?? c.conflictsWith} → ${m.key}`);
    }
  }
  return { key, idOf, keyOf, shadowed };
}

export { post as postJson };
