import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startsProcessesTimeoutMs } from "../support/test-server.js";
import { generatedParts, servedTools } from "./generated-pages.js";
import { root } from "./markdown.js";
import { configRows, generatedPart, mcpToolTable } from "./tables.js";

// The tables written from the code must be what the code gives now: run `npm run docs` after changing
// src/config.ts, the error codes or the MCP tools (the protos' annotations).

describe("generated documentation tables", () => {
  it("documents every configuration variable with a meaning", () => {
    const undocumented = configRows()
      .filter((row) => row.meaning.length < 10)
      .map((row) => row.variable);
    expect(undocumented, "give these variables a doc comment in src/config.ts").toEqual([]);
  });

  it(
    "match the running server's MCP tools, src/config.ts and the error codes",
    async () => {
      const tools = await servedTools();
      expect(tools.length).toBeGreaterThan(10);
      expect(mcpToolTable(tools)).toContain("| `recall` |");
      for (const part of generatedParts(tools)) {
        const page = readFileSync(path.join(root, part.file), "utf8");
        expect(generatedPart(page, part.name), `${part.file} is stale: run npm run docs`).toBe(part.content);
      }
    },
    startsProcessesTimeoutMs,
  );
});
