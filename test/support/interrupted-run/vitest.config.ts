import { defineConfig } from "vitest/config";

// The suite's set-up around one test that waits forever: what an interrupted `npm test` leaves behind.
export default defineConfig({
  test: {
    root: new URL("../../..", import.meta.url).pathname,
    include: ["test/support/interrupted-run/*.fixture.ts"],
    globalSetup: ["test/support/postgres-cluster.ts"],
    testTimeout: 0,
  },
});
