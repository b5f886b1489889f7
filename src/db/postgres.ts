import pg from "pg";
import type { Database, Sql } from "./database.js";

/** A pooled connection to a PostgreSQL server (15 or newer). */
export async function openPostgres(connectionString: string, max: number): Promise<Database> {
  const pool = new pg.Pool({ connectionString, max, application_name: "agentmem" });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on("error", () => undefined);
  const query: Sql["query"] = async <Row>(text: string, params?: readonly unknown[]) =>
    (await pool.query(text, params as unknown[] | undefined)).rows as Row[];
  await query("select 1");
  return {
    kind: "postgres",
    query,
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query("begin");
        const result = await fn({
          query: async <Row>(text: string, params?: readonly unknown[]) =>
            (await client.query(text, params as unknown[] | undefined)).rows as Row[],
        });
        await client.query("commit");
        return result;
      } catch (err) {
        await client.query("rollback").catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    ping: async () => {
      await query("select 1");
    },
    // The server's autovacuum does it.
    maintain: async () => undefined,
    close: () => pool.end(),
  };
}
