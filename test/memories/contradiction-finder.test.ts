import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/ids.js";
import { createContradictionFinder } from "../../src/memories/contradictions/finder.js";
import { jobVectorReader } from "../../src/memories/job-vectors.js";
import { constantEmbedder } from "../support/constant-embedder.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

describe("contradiction finder", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("pglite");
  });
  afterAll(() => server?.close());

  it("lets other work run while it compares the memories of a large write", async () => {
    const { db, vectors } = server.app;
    const find = createContradictionFinder({ db, vectors, embedder: constantEmbedder, judge: null, log: pino({ level: "silent" }), candidates: 8, jobVectors: jobVectorReader(db), sliceMs: 1 });
    // 300 memories are 44,850 pairs: hundreds of milliseconds of rules, about a third of the call.
    const words = ["billing", "search", "gateway", "ledger", "mailer", "catalog", "reports", "auth"];
    const write = Array.from({ length: 300 }, (_, i) => ({
      id: newId("mem"),
      content: `The ${words[i % 8]} service ${i} in region ${words[(i >> 3) % 8]} is deployed by the ${words[(i >> 6) % 8]} team every ${i % 7} days through pipeline ${i}`,
      containers: ["ops"],
    }));
    write[40]!.content = "The staging database runs on port 5432";
    write[299]!.content = "The staging database runs on port 6543";

    // The longest the event loop went without turning while the call ran.
    let last = performance.now();
    let longestGap = 0;
    let running = true;
    const ticker = () => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
      if (running) setImmediate(ticker);
    };
    setImmediate(ticker);
    const started = performance.now();
    const found = await find(newId("ws"), write);
    const took = performance.now() - started;
    running = false;
    // The ticker's last turn, queued before this one, measures the gap up to the call's end.
    await new Promise((turn) => setImmediate(turn));

    // Relative to the call, which is as fast or slow as the machine: comparing without pauses held the
    // loop for about 30% of it (368 of 1,226 ms), in slices the longest gap was 2 to 3% (24 to 32 ms).
    expect(longestGap).toBeLessThan(took / 10);
    expect(found.contradictions).toEqual([
      expect.objectContaining({ newer: 299, olderId: write[40]!.id, reason: "different number: 5432 → 6543", rule: "number" }),
    ]);
  });
});
