import type { BenchServer } from "./server.js";

/** The server's indexer backlog, from /metrics: memory writes not yet in the vector index. */
export async function indexBacklog(server: BenchServer): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const value = /^agentmem_index_backlog_jobs (\d+)$/m.exec(text)?.[1];
  if (value === undefined) throw new Error("the server's /metrics has no agentmem_index_backlog_jobs");
  return Number(value);
}

/**
 * Polls the backlog every 0.5 s until the indexer has written every committed memory to the vector index,
 * and answers the seconds that took. A recall cannot tell: it finds unindexed writes through the outbox.
 */
export async function untilIndexed(server: BenchServer, giveUp: () => boolean = () => false): Promise<number> {
  const t0 = performance.now();
  while ((await indexBacklog(server)) > 0) {
    if (giveUp()) throw new Error("the indexer did not catch up in time");
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return (performance.now() - t0) / 1000;
}
