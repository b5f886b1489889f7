import type { BenchServer } from "./server.js";

/** A bench server's metric from /metrics (the first series of that name); NaN when it has none. */
export async function serverMetric(server: BenchServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : Number.NaN;
}

/**
 * Polls the server's indexer backlog (agentmem_index_backlog_jobs) every 0.5 s until it has written every
 * committed memory to the vector index, and answers the seconds that took. A recall cannot tell: it finds
 * unindexed writes through the outbox.
 */
export async function untilIndexed(server: BenchServer, giveUp: () => boolean = () => false): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const backlog = await serverMetric(server, "agentmem_index_backlog_jobs");
    if (Number.isNaN(backlog)) throw new Error("the server's /metrics has no agentmem_index_backlog_jobs");
    if (backlog === 0) return (performance.now() - t0) / 1000;
    if (giveUp()) throw new Error("the indexer did not catch up in time");
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
