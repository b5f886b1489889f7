import { agentMemTools } from "@agentmem/openai-agents";
import { Agent, run, setTracingDisabled, type Model } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents-core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importDocExample } from "../../../test/support/doc-examples.js";
import { rest, startsProcessesTimeoutMs, startTestServer, type TestServer } from "../../../test/support/test-server.js";

// No trace leaves the machine in tests.
setTracingDisabled(true);

/** The outputs of the function calls of a run (the objects the tools returned), in order. */
function toolOutputs(result: Awaited<ReturnType<typeof run>>): unknown[] {
  return result.newItems.flatMap((item) => (item.type === "tool_call_output_item" ? [item.output] : []));
}

describe("clients/openai-agents: memory and skill tools for the OpenAI Agents SDK, with its ScriptedModel against a real server", () => {
  let server: TestServer;
  let options: { baseUrl: string; apiKey: string };

  beforeAll(async () => {
    server = await startTestServer("pglite");
    options = { baseUrl: server.url, apiKey: await server.createKey("openai-agents", "agent") };
  }, startsProcessesTimeoutMs);
  afterAll(() => server?.close());

  it("remember stores a memory that recall finds in a later run; findSkill and loadSkill read a skill", async () => {
    const tools = agentMemTools({ ...options, tags: ["agents"] });
    const first = new ScriptedModel([
      [functionCall("remember", { content: "The user's standup is at 9:30", type: "fact" }, { callId: "c1" })],
      [assistantMessage("Noted.")],
    ]);
    const turn1 = await run(new Agent({ name: "assistant", instructions: "Help.", tools, model: first }), "My standup is at 9:30.");
    expect(turn1.finalOutput).toBe("Noted.");
    const [stored] = toolOutputs(turn1) as Array<{ stored: string }>;
    const memory = await rest(server.url, options.apiKey)("GET", `/api/v1/agent/memories/${stored!.stored}`);
    expect(memory.body).toMatchObject({ content: "The user's standup is at 9:30", tags: ["agents"], source: "conversation" });

    await rest(server.url, options.apiKey)("POST", "/api/v1/agent/skills", { name: "meeting-notes", description: "Take notes in a team meeting", content: "# Notes\nDecisions first." });
    const second = new ScriptedModel([
      [functionCall("recall", { query: "when is standup", limit: null }, { callId: "c2" }), functionCall("findSkill", { query: "notes for the standup meeting" }, { callId: "c3" })],
      [functionCall("loadSkill", { slug: "meeting-notes" }, { callId: "c4" })],
      [assistantMessage("At 9:30; decisions first.")],
    ]);
    const turn2 = await run(new Agent({ name: "assistant", instructions: "Help.", tools, model: second }), "When is standup, and how do I take notes?");
    const [recalled, found, loaded] = toolOutputs(turn2) as [{ memories: Array<{ id: string }> }, { skills: Array<{ slug: string }> }, { instructions: string }];
    expect(recalled.memories.map((m) => m.id)).toEqual([stored!.stored]);
    expect(found.skills[0]!.slug).toBe("meeting-notes");
    expect(loaded.instructions).toBe("# Notes\nDecisions first.");
    const recallTool = second.firstCall!.request.tools.find((t) => t.name === "recall") as { parameters: { required: string[] }; strict: boolean };
    expect(recallTool).toMatchObject({ strict: true, parameters: { required: ["query", "limit"] } });
  });

  it("runs the example of docs/how-to/openai-agents.md", async () => {
    process.env.AGENTMEM_URL = server.url;
    process.env.AGENTMEM_API_KEY = await server.createKey("openai-agents-docs", "agent");
    const example = await importDocExample<{ chat(message: string, model?: Model): Promise<string> }>("docs/how-to/openai-agents.md", "openai-agents");

    const turn1 = new ScriptedModel([
      [functionCall("remember", { content: "The user's left knee hurts when running downhill", type: "fact" }, { callId: "c1" })],
      [assistantMessage("Noted, I will keep it in mind.")],
    ]);
    expect(await example.chat("My left knee hurts when I run downhill.", turn1)).toBe("Noted, I will keep it in mind.");

    const turn2 = new ScriptedModel([[assistantMessage("A flat route this Sunday.")]]);
    expect(await example.chat("Plan my trail run for Sunday.", turn2)).toBe("A flat route this Sunday.");
    expect(turn2.firstCall!.request.systemInstructions).toContain("- The user's left knee hurts when running downhill");
  });
});
