import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { startScriptDefaults } from "../../bench/lib/server.js";

it("bench servers take the environment defaults of npm start's script", () => {
  expect(startScriptDefaults("A_B=${A_B:-2} C_=${C_:-131072} node --import tsx src/main.ts")).toEqual({ A_B: "2", C_: "131072" });
  // Not a default: a plain assignment, or one defaulting to another variable.
  expect(startScriptDefaults("X=1 Y=${Z:-3} node main.js")).toEqual({});
  const script = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { scripts: { start: string } }).scripts.start;
  expect(startScriptDefaults(script)).toHaveProperty("MALLOC_ARENA_MAX", "2");
});
