import { describe, expect, it } from "vitest";
import { eventLoopSlices } from "../src/event-loop-slices.js";

describe("event loop slices", () => {
  it("are due once their time has run, and a pause starts the next slice", async () => {
    const now = eventLoopSlices(0);
    expect(now.due).toBe(true);
    const long = eventLoopSlices(60_000);
    expect(long.due).toBe(false);
    await long.pause();
    expect(long.due).toBe(false);
  });

  it("let callbacks queued during a computation run at each pause, before it ends", async () => {
    const slices = eventLoopSlices(0);
    const seen: number[] = [];
    let step = 0;
    const ticker = () => {
      seen.push(step);
      if (step < 5) setImmediate(ticker);
    };
    setImmediate(ticker);
    for (; step < 5; step++) if (slices.due) await slices.pause();
    // Each of the five pauses let the ticker run once, at the step it paused in.
    expect(seen).toEqual([0, 1, 2, 3, 4]);
  });
});
