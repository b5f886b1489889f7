import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { backoffMs, defaultRetryPolicy, isRetryableConflict, retryConflicts } from "../../src/search/vector/lance-retry.js";
import { openLanceIndex } from "../../src/search/vector/lancedb-index.js";

// Messages as LanceDB 0.37 reports them.
const preempted = new Error(
  "lance error: Retryable commit conflict for version 4: This CreateIndex transaction was preempted by concurrent transaction CreateIndex at version 4. Please retry.",
);
const rewrite = new Error("Retryable commit conflict for version 12: This Rewrite transaction was preempted by concurrent transaction Update at version 12. Please retry.");
const exhausted = new Error("Commit conflict for version 8: Failed to commit the transaction after 5 retries.");
const overwritten = new Error(
  "lance error: Incompatible transaction: This CreateIndex transaction is incompatible with concurrent transaction Overwrite at version 2.",
);

describe("retryConflicts", () => {
  it("recognises LanceDB's retryable commit conflicts and nothing else", () => {
    for (const err of [preempted, rewrite, exhausted, overwritten]) expect(isRetryableConflict(err)).toBe(true);
    expect(isRetryableConflict(new Error("Table 'memories' was not found"))).toBe(false);
    expect(isRetryableConflict("commit conflict")).toBe(false);
  });

  it("retries a conflict with growing, capped, jittered pauses until the operation succeeds", async () => {
    const pauses: number[] = [];
    let calls = 0;
    const result = await retryConflicts(
      async () => {
        if (++calls < 4) throw rewrite;
        return "done";
      },
      { attempts: 5, baseDelayMs: 100, maxDelayMs: 250 },
      async (ms) => void pauses.push(ms),
      () => 0.999,
    );
    expect(result).toBe("done");
    expect(pauses).toEqual([99, 199, 249]);
  });

  it("gives up after the policy's attempts, and never retries other errors", async () => {
    let calls = 0;
    const noPause = async () => undefined;
    await expect(retryConflicts(async () => { calls++; throw preempted; }, { attempts: 3, baseDelayMs: 1, maxDelayMs: 1 }, noPause)).rejects.toBe(preempted);
    expect(calls).toBe(3);
    calls = 0;
    const other = new Error("disk full");
    await expect(retryConflicts(async () => { calls++; throw other; }, defaultRetryPolicy, noPause)).rejects.toBe(other);
    expect(calls).toBe(1);
  });

  it("bounds every pause by the policy", () => {
    for (let retry = 1; retry < 40; retry++) {
      const ms = backoffMs(defaultRetryPolicy, retry, 0.999999);
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThan(defaultRetryPolicy.maxDelayMs);
    }
  });
});

describe("opening one new LanceDB directory from several handles at once", () => {
  it("never fails: the full-text index is built once and the others find it", async () => {
    for (let round = 0; round < 16; round++) {
      const dir = await mkdtemp(path.join(os.tmpdir(), "agentmem-lance-open-"));
      try {
        const opened = await Promise.allSettled(Array.from({ length: 4 }, () => openLanceIndex({ uri: dir, dimensions: 4 })));
        for (const o of opened) if (o.status === "fulfilled") await o.value.close();
        expect(opened.filter((o) => o.status === "rejected").map((o) => String((o as PromiseRejectedResult).reason))).toEqual([]);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
  });
});
