import { createHash } from "node:crypto";
import pg from "pg";
import type { Database, QueryOptions, Sql } from "./database.js";

/** Prepared statements' names by their text: few, as only fixed texts are prepared (QueryOptions). */
const statementNames = new Map<string, string>();

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `agentmem_${createHash("sha256").update(text).digest("base64url").slice(0, 32)}`;
    statementNames.set(text, name);
  }
  return name;
}

/** A pooled connection to a PostgreSQL server (15 or newer). */
export async function openPostgres(connectionString: string, max: number, preparedStatements = true): Promise<Database> {
  const pool = new pg.Pool({ connectionString, max, application_name: "agentmem" });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on("error", () => undefined);
  const run = async <Row>(on: pg.Pool | pg.PoolClient, text: string, params?: readonly unknown[], options?: QueryOptions): Promise<Row[]> => {
    const values = params as unknown[] | undefined;
    const config = preparedStatements && options?.prepare ? { name: statementName(text), text, values } : { text, values };
    return (await on.query(config)).rows as Row[];
  };
  const query: Sql["query"] = (text, params, options) => run(pool, text, params, options);
  await query("select 1");
  return {
    kind: "postgres",
    query,
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query("begin");
        const result = await fn({ query: (text, params, options) => run(client, text, params, options) });
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
