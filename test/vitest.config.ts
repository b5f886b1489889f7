import path from "node:path";
import { defineConfig } from "vitest/config";

const root = new URL("..", import.meta.url).pathname;
// The adapter packages' tests and docs examples import them by name; they run from source.
const clientSource = (dir: string) => path.join(root, "clients", dir, "src/index.ts");

export default defineConfig({
  resolve: {
    alias: {
      "@agentmem/rest": clientSource("rest"),
      "@agentmem/ai-sdk": clientSource("ai-sdk"),
      "@agentmem/langchain": clientSource("langchain"),
      "@agentmem/openai-agents": clientSource("openai-agents"),
    },
  },
  test: {
    root,
    include: ["test/**/*.test.ts", "clients/*/test/**/*.test.ts"],
    globalSetup: ["test/support/postgres-cluster.ts", "test/support/client-packages.ts"],
    // Limits that catch a hung test, not a slow machine: tests wait for the conditions they need.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: "forks",
    // Vitest runs one file at a time on a 2-core machine by default; the files mostly wait on model
    // workers, databases and sockets, so four at once keep both cores busy.
    maxWorkers: 4,
    // A process per file spent 2-3 s of the two cores importing the server's modules again for each of 70
    // files; the files share four processes instead (their servers, databases and ports are their own, and
    // a test that measures its process's memory measures a child process).
    isolate: false,
  },
});
