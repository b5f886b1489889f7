import { agentMemMiddleware, agentMemTools, withMemory } from "@agentmem/ai-sdk";
import { generateText, stepCountIs, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importDocExample } from "../../../test/support/doc-examples.js";
import { rest, startsProcessesTimeoutMs, startTestServer, type TestServer } from "../../../test/support/test-server.js";

type Step = ConstructorParameters<typeof MockLanguageModelV3>[0] extends infer O ? (O extends { doGenerate?: infer G } ? Extract<G, unknown[]>[number] : never) : never;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const call = (toolName: string, input: unknown, id = toolName): Step => ({
  content: [{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: "tool-calls", raw: undefined },
  usage,
  warnings: [],
});
const say = (text: string): Step => ({ content: [{ type: "text", text }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] });

/** The system messages a mock model was given on its first call. */
function systemText(model: MockLanguageModelV3): string {
  return model.doGenerateCalls[0]!.prompt.flatMap((m) => (m.role === "system" ? [m.content] : [])).join("\n");
}

describe("clients/ai-sdk: memory tools and middleware for the Vercel AI SDK, with its mock model against a real server", () => {
  let server: TestServer;
  let options: { baseUrl: string; apiKey: string; tags: string[] };

  beforeAll(async () => {
    server = await startTestServer("pglite");
    options = { baseUrl: server.url, apiKey: await server.createKey("ai-sdk", "agent"), tags: ["ai-sdk"] };
  }, startsProcessesTimeoutMs);
  afterAll(() => server?.close());

  it("a remember tool call stores a memory that a later turn gets in its prompt and through the recall tool", async () => {
    const tools = agentMemTools(options);
    const first = new MockLanguageModelV3({
      doGenerate: [call("remember", { content: "The user's favourite colour is green", type: "preference" }), say("Noted.")],
    });
    const turn1 = await generateText({ model: first, tools, stopWhen: stepCountIs(3), prompt: "My favourite colour is green." });
    expect(turn1.text).toBe("Noted.");
    const stored = turn1.steps[0]!.toolResults[0]!.output as { stored: string };
    expect(stored.stored).toMatch(/^mem_/);
    const memory = await rest(server.url, options.apiKey)("GET", `/api/v1/agent/memories/${stored.stored}`);
    expect(memory.body).toMatchObject({ content: "The user's favourite colour is green", type: "preference", source: "conversation", tags: ["ai-sdk"] });

    const second = new MockLanguageModelV3({ doGenerate: [call("recall", { query: "favourite colour" }), say("Green.")] });
    const turn2 = await generateText({
      model: wrapLanguageModel({ model: second, middleware: agentMemMiddleware(options) }),
      tools,
      stopWhen: stepCountIs(3),
      system: "You are a helpful assistant.",
      prompt: "Which colour should the new logo be?",
    });
    expect(turn2.text).toBe("Green.");
    const prompt = second.doGenerateCalls[0]!.prompt;
    expect(prompt.map((m) => m.role)).toEqual(["system", "system", "user"]);
    expect(systemText(second)).toContain("- The user's favourite colour is green");
    const recalled = turn2.steps[0]!.toolResults[0]!.output as { memories: Array<{ id: string; content: string }> };
    expect(recalled.memories.map((m) => m.id)).toEqual([stored.stored]);
  });

  it("the middleware keeps recalled memory within its token budget and adds nothing when nothing is recalled", async () => {
    const budget = new MockLanguageModelV3({ doGenerate: [say("ok")] });
    await generateText({ model: withMemory(budget, { ...options, maxTokens: 1 }), prompt: "Which colour should the new logo be?" });
    expect(systemText(budget)).toBe("");

    const elsewhere = new MockLanguageModelV3({ doGenerate: [say("ok")] });
    await generateText({ model: withMemory(elsewhere, { ...options, tags: ["no-such-tag"] }), prompt: "Which colour?" });
    expect(elsewhere.doGenerateCalls[0]!.prompt.map((m) => m.role)).toEqual(["user"]);
  });

  it("findSkill and loadSkill give the model a skill's instructions", async () => {
    const call_ = rest(server.url, options.apiKey);
    await call_("POST", "/api/v1/agent/skills", {
      name: "deploy-checklist",
      description: "Steps to deploy the web service to production safely",
      content: "# Deploy\n1. Run the tests.\n2. Tag the release.",
    });
    const model = new MockLanguageModelV3({
      doGenerate: [call("findSkill", { query: "ship the web service to production" }), call("loadSkill", { slug: "deploy-checklist" }), say("Done.")],
    });
    const result = await generateText({ model, tools: agentMemTools(options), stopWhen: stepCountIs(4), prompt: "Deploy the service." });
    expect(result.steps[0]!.toolResults[0]!.output).toEqual({
      skills: [{ slug: "deploy-checklist", name: "deploy-checklist", description: "Steps to deploy the web service to production safely" }],
    });
    expect(result.steps[1]!.toolResults[0]!.output).toMatchObject({ slug: "deploy-checklist", instructions: "# Deploy\n1. Run the tests.\n2. Tag the release." });
  });

  it("runs the example of docs/how-to/vercel-ai-sdk.md", async () => {
    process.env.AGENTMEM_URL = server.url;
    process.env.AGENTMEM_API_KEY = await server.createKey("ai-sdk-docs", "agent");
    const example = await importDocExample<{ chat(model: MockLanguageModelV3, message: string): Promise<string> }>("docs/how-to/vercel-ai-sdk.md", "ai-sdk");

    const turn1 = new MockLanguageModelV3({ doGenerate: [call("remember", { content: "The user lives in Lisbon", type: "fact" }), say("Got it.")] });
    expect(await example.chat(turn1, "I live in Lisbon.")).toBe("Got it.");

    const turn2 = new MockLanguageModelV3({ doGenerate: [say("Pack for Lisbon weather.")] });
    expect(await example.chat(turn2, "What should I pack for the weekend at home?")).toBe("Pack for Lisbon weather.");
    expect(systemText(turn2)).toContain("- The user lives in Lisbon");
  });
});
