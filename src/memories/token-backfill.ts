import type { FastifyBaseLogger } from "fastify";
import type { Database } from "../db/database.js";
import type { TokenCounter } from "../recall/token-counter.js";

// Memories written before token counts were stored (migration 7) are counted once, in the background,
// so recall reads a stored count for every memory instead of tokenising returned contents each time.
const batchSize = 200;

/** Counts and stores the tokens of memories that have no count; returns how many it filled. */
export async function backfillContentTokens(db: Database, tokens: TokenCounter, log: FastifyBaseLogger, stopped: () => boolean): Promise<number> {
  let filled = 0;
  let after = "";
  while (!stopped()) {
    const rows = await db.query<{ id: string; version: number; content: string }>(
      "select id, version, content from memories where content_tokens is null and id > $1 order by id limit $2",
      [after, batchSize],
    );
    if (rows.length === 0) break;
    const counts = await tokens.count(rows.map((r) => r.content));
    // The version guards against an edit committed meanwhile, which stored its own count.
    await db.query(
      `update memories m set content_tokens = c.tokens
       from unnest($1::text[], $2::int[], $3::int[]) as c(id, version, tokens)
       where m.id = c.id and m.version = c.version and m.content_tokens is null`,
      [rows.map((r) => r.id), rows.map((r) => r.version), counts],
    );
    filled += rows.length;
    after = rows.at(-1)!.id;
  }
  if (filled > 0) log.info({ filled }, "stored token counts of older memories");
  return filled;
}
