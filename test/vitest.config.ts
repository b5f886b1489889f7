import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: new URL("..", import.meta.url).pathname,
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/postgres-cluster.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Vitest runs one file at a time on a 2-core machine by default; the files mostly wait on model
    // workers, databases and sockets, so four at once keep both cores busy.
    maxWorkers: 4,
  },
});
