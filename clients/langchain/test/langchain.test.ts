import { AgentMemRetriever, AgentMemStore, agentMemTools } from "@agentmem/langchain";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, type ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { FakeChatModel } from "@langchain/core/utils/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importDocExample } from "../../../test/support/doc-examples.js";
import { rest, startsProcessesTimeoutMs, startTestServer, type TestServer } from "../../../test/support/test-server.js";

/** @langchain/core's FakeChatModel answering with scripted messages (tool calls included), one per call. */
class ScriptedChatModel extends FakeChatModel {
  readonly prompts: BaseMessage[][] = [];
  constructor(private readonly script: AIMessage[]) {
    super({});
  }
  override bindTools(): this {
    return this;
  }
  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.prompts.push(messages);
    const message = this.script.shift()!;
    return { generations: [{ message, text: message.text }] };
  }
}

const callTool = (name: string, args: Record<string, unknown>) => new AIMessage({ content: "", tool_calls: [{ id: `call-${name}`, name, args, type: "tool_call" }] });

describe("clients/langchain: retriever, store and tools for LangChain JS, against a real server", () => {
  let server: TestServer;
  let options: { baseUrl: string; apiKey: string };

  beforeAll(async () => {
    server = await startTestServer("pglite");
    options = { baseUrl: server.url, apiKey: await server.createKey("langchain", "agent") };
  }, startsProcessesTimeoutMs);
  afterAll(() => server?.close());

  it("the retriever returns memories as Documents with the receipt in metadata", async () => {
    const write = rest(server.url, options.apiKey);
    await write("POST", "/api/v1/agent/memories", {
      memories: [
        { content: "The team deploys on Tuesdays", type: "fact", tags: ["retriever"] },
        { content: "The user prefers short answers", type: "preference", tags: ["retriever"] },
      ],
    });
    const retriever = new AgentMemRetriever({ ...options, tags: ["retriever"], recall: { limit: 1, searchMode: "hybrid" } });
    const [doc, ...others] = await retriever.invoke("when do we deploy?");
    expect(others).toEqual([]);
    expect(doc!.pageContent).toBe("The team deploys on Tuesdays");
    expect(doc!.metadata).toMatchObject({ type: "fact", receipt: { searchMode: "hybrid", returned: 1 } });
    expect(doc!.metadata.id).toMatch(/^mem_/);
    expect(doc!.metadata.traceId).toMatch(/^trc_/);
  });

  it("the store keeps keys as memories: set, get, update, list keys, delete", async () => {
    const store = new AgentMemStore({ ...options, namespace: "profile" });
    const other = new AgentMemStore({ ...options, namespace: "other" });
    await store.mset([["user:diet", "The user is vegetarian"], ["user:city", "The user lives in Porto"]]);
    await other.mset([["user:diet", "unrelated"]]);
    expect(await store.mget(["user:diet", "user:city", "user:none"])).toEqual(["The user is vegetarian", "The user lives in Porto", undefined]);

    await store.mset([["user:diet", "The user is vegan"]]);
    expect(await store.mget(["user:diet"])).toEqual(["The user is vegan"]);
    const keys: string[] = [];
    for await (const key of store.yieldKeys("user:")) keys.push(key);
    expect(keys.sort()).toEqual(["user:city", "user:diet"]);

    await store.mdelete(["user:city"]);
    expect(await store.mget(["user:city", "user:diet"])).toEqual([undefined, "The user is vegan"]);
    expect(await other.mget(["user:diet"])).toEqual(["unrelated"]);
  });

  it("the tools store, recall and load skills for a tool-calling model", async () => {
    const tools = agentMemTools({ ...options, tags: ["tools"] });
    expect(tools.map((t) => t.name)).toEqual(["remember", "recall", "findSkill", "loadSkill"]);
    const byName = (name: string) => tools.find((t) => t.name === name)!;
    const stored = JSON.parse(await byName("remember").invoke({ content: "The user's dog is called Rex", type: "fact" }));
    expect(stored.stored).toMatch(/^mem_/);
    const recalled = JSON.parse(await byName("recall").invoke({ query: "what is the dog's name" }));
    expect(recalled.memories.map((m: { id: string }) => m.id)).toEqual([stored.stored]);

    await rest(server.url, options.apiKey)("POST", "/api/v1/agent/skills", { name: "weekly-report", description: "Write the weekly status report", content: "# Report\nList wins, risks, next steps." });
    const message = (await byName("findSkill").invoke({ id: "c1", name: "findSkill", args: { query: "status report for the week" }, type: "tool_call" })) as ToolMessage;
    expect(JSON.parse(message.content as string).skills[0].slug).toBe("weekly-report");
    expect(JSON.parse(await byName("loadSkill").invoke({ slug: "weekly-report" })).instructions).toBe("# Report\nList wins, risks, next steps.");
  });

  it("runs the example of docs/how-to/langchain.md: a remember call in one turn is in the next turn's prompt", async () => {
    process.env.AGENTMEM_URL = server.url;
    process.env.AGENTMEM_API_KEY = await server.createKey("langchain-docs", "agent");
    const example = await importDocExample<{ chat(model: BaseChatModel, message: string): Promise<string> }>("docs/how-to/langchain.md", "langchain");

    const turn1 = new ScriptedChatModel([callTool("remember", { content: "The user is allergic to peanuts", type: "fact" }), new AIMessage("Noted.")]);
    expect(await example.chat(turn1, "I am allergic to peanuts.")).toBe("Noted.");
    expect(turn1.prompts[1]!.at(-1)!.content).toMatch(/^\{"stored":"mem_/);

    const turn2 = new ScriptedChatModel([new AIMessage("Try a sesame-free, peanut-free satay.")]);
    expect(await example.chat(turn2, "Suggest a satay recipe.")).toBe("Try a sesame-free, peanut-free satay.");
    expect(turn2.prompts[0]![0]!.content).toContain("- The user is allergic to peanuts");
  });
});
