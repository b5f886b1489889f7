import { writeFileSync } from "node:fs";
import os from "node:os";
import { inject, it } from "vitest";

// Run by test/interrupted-run.test.ts, which interrupts it: it says where the run's scratch directory and
// PostgreSQL server are, then waits to be interrupted.
it("waits to be interrupted", async () => {
  writeFileSync(process.env.INTERRUPTED_RUN_REPORT!, JSON.stringify({ tmpdir: os.tmpdir(), postgresUrl: inject("postgresUrl") }));
  await new Promise(() => {});
});
