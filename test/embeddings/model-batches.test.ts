import { describe, expect, it } from "vitest";
import { batchChars, batchesByLength } from "../../src/embeddings/model-processes.js";

const paddedChars = (texts: string[], batch: number[]) => batch.length * Math.max(...batch.map((i) => texts[i]!.length));

describe("model batches", () => {
  // 100 sentences of 100 to 119 characters, as a write of 100 memories.
  const texts = Array.from({ length: 100 }, (_, i) => "x".repeat(100 + (i % 20)));

  it("stay within the padded characters of their mode: 5 sentences of about 100 characters while queries come, 38 in a bulk load", () => {
    for (const [cap, most] of [
      [batchChars.interactive, 5],
      [batchChars.bulk, 38],
    ] as const) {
      const batches = batchesByLength(texts, 256, cap);
      expect(batches.flat().sort((a, b) => a - b)).toEqual(texts.map((_, i) => i));
      for (const batch of batches) expect(paddedChars(texts, batch)).toBeLessThanOrEqual(cap);
      expect(Math.max(...batches.map((b) => b.length))).toBe(most);
    }
  });

  it("group similar lengths, cap the texts a batch holds, and send a text longer than the cap alone", () => {
    const mixed = ["a".repeat(10), "b".repeat(300), "c".repeat(11), "d".repeat(900), "e".repeat(12)];
    // Two texts at most; 12 and 300 characters would pad to 600, over the 512 of a query's batch.
    expect(batchesByLength(mixed, 2, batchChars.interactive)).toEqual([[0, 2], [4], [1], [3]]);
  });
});
