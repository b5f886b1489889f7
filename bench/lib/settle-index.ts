import type { App } from "../../src/app.js";

/**
 * Indexes everything queued and folds it into the index's structures before a benchmark asks anything.
 * Rows written since the last fold are scored by a scan with other statistics, and the background fold
 * runs when it likes: without this, quality numbers varied from run to run.
 */
export async function settleIndex(app: App): Promise<void> {
  await app.indexer.drain();
  await app.vectors.optimize();
}
