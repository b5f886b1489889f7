// Writes the documentation's generated tables from the code: `npm run docs`.
// The MCP tool table comes from a real server's tool list; the configuration table from src/config.ts.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { generatedParts, servedTools } from "./generated-pages.js";
import { root } from "./markdown.js";
import { withGeneratedPart } from "./tables.js";

for (const part of generatedParts(await servedTools())) {
  const file = path.join(root, part.file);
  const before = readFileSync(file, "utf8");
  const after = withGeneratedPart(before, part.name, part.content);
  if (after !== before) writeFileSync(file, after);
  console.log(`${part.file} (${part.name}): ${after === before ? "unchanged" : "written"}`);
}
